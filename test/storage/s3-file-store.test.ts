import { randomBytes } from 'node:crypto';
import { PassThrough, Readable } from 'node:stream';
import type { S3Client } from '@aws-sdk/client-s3';
import { GatewayError } from '../../src/errors';
import { createS3Client, parseS3Location, S3FileStore } from '../../src/storage/s3-file-store';
import { startLocalS3, type LocalS3 } from '../support/s3rver';
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
  beforeEach(() => {
    prefix = `t-${randomBytes(4).toString('hex')}/files`;
    // Small ranges so reads take several GETs.
    store = new S3FileStore(client, { bucket: s3.bucket, prefix }, { partSize: 5 * MiB, rangeSize: 100_000 });
  });

  it('stores a stream under the prefix, reporting its size and SHA-256, and reads it back range by range', async () => {
    const chunks = [Buffer.from('hello '), Buffer.from('wörld'), randomBytes(250_000)];
    const data = Buffer.concat(chunks);

    const result = await store.put('file-abc', Readable.from(chunks), { maxBytes: 1_000_000 });

    expect(result).toEqual({ bytes: data.length, sha256: sha256(data) });
    expect(await readAll(await store.open('file-abc'))).toEqual(data);
    expect(await s3.keys(prefix)).toEqual([`${prefix}/file-abc`]);
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

  it('stores an empty stream', async () => {
    expect(await store.put('empty', Readable.from([]), { maxBytes: 10 })).toEqual({ bytes: 0, sha256: sha256(Buffer.alloc(0)) });
    expect(await readAll(await store.open('empty'))).toEqual(Buffer.alloc(0));
  });

  it('fails with payload_too_large past maxBytes (in the first part or a later one), leaving no object and the source intact', async () => {
    const source = new PassThrough();
    source.write(Buffer.alloc(60));
    source.write(Buffer.alloc(60));
    const err = await store.put('small-big', source, { maxBytes: 100 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GatewayError);
    expect(err).toMatchObject({ kind: 'payload_too_large', status: 413, param: 'file' });
    expect(source.destroyed).toBe(false);
    source.destroy();

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
  ] as const)('leaves no object when the source ends with %s, small or multipart', async (ending, message) => {
    await expect(store.put('broken', brokenSource([Buffer.alloc(1000, 1)], ending, 50), { maxBytes: 1_000_000 })).rejects.toThrow(message);
    const parts = Array.from({ length: 7 }, (_, i) => Buffer.alloc(MiB, i));
    await expect(store.put('broken-big', brokenSource(parts, ending, 50), { maxBytes: 20 * MiB })).rejects.toThrow(message);
    expect(await s3.keys(prefix)).toEqual([]);
  });

  it('replaces an existing object only when the new put succeeds', async () => {
    await store.put('same', Readable.from([Buffer.from('first')]), { maxBytes: 100 });
    await expect(store.put('same', Readable.from([Buffer.alloc(200)]), { maxBytes: 100 })).rejects.toThrow();
    expect((await readAll(await store.open('same'))).toString()).toBe('first');
    await store.put('same', Readable.from([Buffer.from('second')]), { maxBytes: 100 });
    expect((await readAll(await store.open('same'))).toString()).toBe('second');
  });

  it('does not lose data when the caller also reads the source with a data listener', async () => {
    const source = new PassThrough();
    const seen: Buffer[] = [];
    source.on('data', (chunk: Buffer) => seen.push(chunk));
    const putting = store.put('tapped', source, { maxBytes: 1000 });
    source.end(Buffer.from('{"a":1}\n{"b":2}\n'));
    expect((await putting).bytes).toBe(16);
    expect(Buffer.concat(seen).toString()).toBe('{"a":1}\n{"b":2}\n');
    expect((await readAll(await store.open('tapped'))).toString()).toBe('{"a":1}\n{"b":2}\n');
  });

  it('rejects open of a missing key with not_found and deletes idempotently', async () => {
    await expect(store.open('nope')).rejects.toMatchObject({ kind: 'not_found', status: 404 });
    await store.put('gone', Readable.from([Buffer.from('x')]), { maxBytes: 10 });
    await store.delete('gone');
    await store.delete('gone');
    await expect(store.open('gone')).rejects.toMatchObject({ kind: 'not_found' });
  });

  it.each(['', '..', 'a/b', '.hidden'])('refuses the unsafe key %j', async (key) => {
    await expect(store.put(key, Readable.from([Buffer.from('x')]), { maxBytes: 10 })).rejects.toMatchObject({ kind: 'invalid_request' });
    await expect(store.open(key)).rejects.toMatchObject({ kind: 'invalid_request' });
  });

  it('parses s3:// locations', () => {
    expect(parseS3Location('s3://my-bucket')).toEqual({ bucket: 'my-bucket', prefix: '' });
    expect(parseS3Location('s3://my-bucket/a/b/')).toEqual({ bucket: 'my-bucket', prefix: 'a/b' });
    expect(() => parseS3Location('https://x/y')).toThrow(/s3:\/\/bucket/);
  });
});
