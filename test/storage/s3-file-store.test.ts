import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import type { S3Client } from '@aws-sdk/client-s3';
import { createS3Client, parseS3Location, S3FileStore } from '../../src/storage/s3-file-store';
import { startLocalS3, type LocalS3 } from '../support/s3rver';
import { fileStoreContract } from '../support/file-store-kit';
import { brokenSource, readAll, sha256 } from '../support/streams';

const MiB = 1024 * 1024;

describe('S3FileStore against s3rver', () => {
  let s3: LocalS3;
  let client: S3Client;
  let store: S3FileStore;
  let prefix: string;

  beforeAll(async () => {
    s3 = await startLocalS3();
    client = createS3Client(s3.settings);
  });
  afterAll(async () => {
    client.destroy();
    await s3.stop();
  });
  // A store under a prefix of its own for each test; its keys are the objects under that prefix.
  fileStoreContract({ store: () => store, keys: async () => (await s3.keys(prefix)).map((key) => key.slice(`${prefix}/`.length)) });

  beforeEach(() => {
    prefix = `t-${randomBytes(4).toString('hex')}/files`;
    // Small ranges so reads (the contract's 250 kB one) take several GETs.
    store = new S3FileStore(client, { bucket: s3.bucket, prefix }, { partSize: 5 * MiB, rangeSize: 100_000 });
  });

  it('uploads a file larger than a part as a multipart upload', async () => {
    const data = randomBytes(11 * MiB + 123);
    const source = Readable.from(
      (function* () {
        for (let i = 0; i < data.length; i += 64 * 1024) yield data.subarray(i, i + 64 * 1024);
      })(),
    );

    const result = await store.put('big', source, { maxBytes: 20 * MiB });

    expect(result).toEqual({ bytes: data.length, sha256: sha256(data) });
    expect(sha256(await readAll(await store.open('big')))).toBe(sha256(data));
  });

  it('fails with payload_too_large past maxBytes in a later part, leaving no object', async () => {
    const multipart = Readable.from(
      (function* () {
        for (let i = 0; i < 14; i++) yield Buffer.alloc(MiB, i);
      })(),
    );
    await expect(store.put('large-big', multipart, { maxBytes: 12 * MiB })).rejects.toMatchObject({ kind: 'payload_too_large' });

    expect(await s3.keys(prefix)).toEqual([]);
  });

  it.each([
    ['error', 'connection reset'],
    ['destroy', 'Premature close'],
  ] as const)('leaves no object when a multipart source ends with %s', async (ending, message) => {
    const parts = Array.from({ length: 7 }, (_, i) => Buffer.alloc(MiB, i));
    await expect(store.put('broken-big', brokenSource(parts, ending, 50), { maxBytes: 20 * MiB })).rejects.toThrow(message);
    expect(await s3.keys(prefix)).toEqual([]);
  });

  it('parses s3:// locations', () => {
    expect(parseS3Location('s3://my-bucket')).toEqual({ bucket: 'my-bucket', prefix: '' });
    expect(parseS3Location('s3://my-bucket/a/b/')).toEqual({ bucket: 'my-bucket', prefix: 'a/b' });
    expect(() => parseS3Location('https://x/y')).toThrow(/s3:\/\/bucket/);
  });
});
