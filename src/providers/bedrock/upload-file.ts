/**
 * Upload: the (already converted, see dataset.ts) dataset streams into the bucket with lib-storage's
 * Upload — one PutObject for a small file, otherwise a multipart upload of 5 MiB parts, two in flight,
 * so memory stays flat whatever the size; a failure midway aborts the multipart upload. The key is
 * `x-gateway-aws-s3-object-key`, or a new one under the gateway's prefix that sorts by upload time.
 */
import { randomBytes } from 'node:crypto';
import { pipeline, Transform } from 'node:stream';
import { DeleteObjectCommand } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { withPurpose } from '../late-purpose';
import type { ProviderFile, UploadInput } from '../types';
import type { BedrockConnection } from './connection';
import { bucketOf, GATEWAY_PREFIX, s3File } from './files';
import type { S3Location } from './s3-uri';

/** S3's smallest part (but the last); parts this size keep memory low with 10,000 parts to spare. */
export const PART_SIZE = 5 * 1024 * 1024;
const PARTS_IN_FLIGHT = 2;

/** A key part S3 and Bedrock both take: other characters become "_". */
function safeName(filename: string): string {
  const name = filename.replace(/[^-!_*'().A-Za-z0-9]/g, '_').slice(-200);
  return /^\.{0,2}$/.test(name) ? 'dataset.jsonl' : name;
}

/** `gateway-files/20250101T120000.123Z-<random>/<name>`: unique, and in upload order when sorted. */
function generatedKey(filename: string): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '');
  return `${GATEWAY_PREFIX}${stamp}-${randomBytes(6).toString('hex')}/${safeName(filename)}`;
}

/** Counts what passes through. */
function byteCounter(): Transform & { bytes: number } {
  const counter = Object.assign(
    new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        counter.bytes += chunk.length;
        callback(null, chunk);
      },
    }),
    { bytes: 0 },
  );
  return counter;
}

export async function uploadFile(conn: BedrockConnection, input: UploadInput): Promise<ProviderFile> {
  const location: S3Location = { bucket: bucketOf(conn), key: conn.objectKey ?? generatedKey(input.filename) };
  // S3 has no purpose to check: a late one (../late-purpose.ts) that never comes does not leave the object behind.
  const { stored: bytes, purpose } = await withPurpose(input.purpose, {
    store: () => store(conn, input, location),
    undo: () => conn.s3().send(new DeleteObjectCommand({ Bucket: location.bucket, Key: location.key })),
  });
  return s3File(location, bytes, new Date(), purpose);
}

/** Streams the content into the object; the count of bytes sent. */
async function store(conn: BedrockConnection, input: UploadInput, location: S3Location): Promise<number> {
  const counter = byteCounter();
  // pipeline: a failing source (a line that cannot be converted, a client gone) fails the upload.
  const body = pipeline(input.open(), counter, () => undefined);
  const params = { Bucket: location.bucket, Key: location.key, Body: body, ContentType: 'application/jsonl' };
  await conn.call('Amazon S3', () => new Upload({ client: conn.s3(), params, partSize: PART_SIZE, queueSize: PARTS_IN_FLIGHT }).done());
  return counter.bytes;
}
