/**
 * Bedrock has no file API: a dataset is an object in the caller's S3 bucket, and its file id in client
 * mode is its `s3://bucket/key` URI. These operations work on the bucket `x-gateway-aws-s3-bucket`
 * names; the list shows the objects under the gateway's prefix (where generated upload keys go), in
 * key order, which for generated keys is upload order. S3 has no purpose: objects read as `fine-tune`.
 */
import { Readable } from 'node:stream';
import { HeadObjectCommand, DeleteObjectCommand, GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { GatewayError, providerCode } from '../../errors';
import type { FileListInput, ProviderContent, ProviderFile, ProviderPage } from '../types';
import type { BedrockConnection } from './connection';
import { baseName, parseS3Uri, s3Uri, type S3Location } from './s3-uri';

/** Where uploads go unless the caller names a key. */
export const GATEWAY_PREFIX = 'gateway-files/';
/** S3's largest page. */
const MAX_KEYS = 1000;

export const toSeconds = (date: Date | undefined) => (date ? Math.floor(date.getTime() / 1000) : 0);

export function s3File(location: S3Location, bytes: number | undefined, lastModified: Date | undefined, purpose = 'fine-tune'): ProviderFile {
  return {
    id: s3Uri(location),
    bytes: bytes ?? 0,
    createdAt: toSeconds(lastModified),
    filename: baseName(location.key),
    purpose,
    status: 'processed',
    statusDetails: null,
  };
}

/** The bucket the settings named (the registry requires it for file operations). */
export function bucketOf(conn: BedrockConnection): string {
  if (!conn.bucket)
    throw new GatewayError('invalid_request', 'is required for files', { param: 'x-gateway-aws-s3-bucket', aboutField: true, code: 'missing_setting' });
  return conn.bucket;
}

/** The object a file id names: an `s3://` URI in the configured bucket (400 otherwise, before any request). */
export function objectOf(conn: BedrockConnection, id: string): S3Location {
  const bucket = bucketOf(conn);
  const location = parseS3Uri(id);
  if (location?.bucket === bucket) return location;
  throw new GatewayError('invalid_request', `File ids are s3://${bucket}/<key> URIs of the bucket x-gateway-aws-s3-bucket names; '${id}' is not one`, {
    code: 'invalid_file_id',
  });
}

/**
 * An S3 call about the object a file id names, with S3's 404 (HEAD answers have no body to say so)
 * worded as the gateway's: the file is not there.
 */
async function onObject<T>(conn: BedrockConnection, id: string, send: (target: { Bucket: string; Key: string }) => Promise<T>): Promise<T> {
  const { bucket, key } = objectOf(conn, id);
  try {
    return await conn.call('Amazon S3', () => send({ Bucket: bucket, Key: key }));
  } catch (err) {
    if (!(err instanceof GatewayError) || err.status !== 404) throw err;
    throw new GatewayError('provider', `Amazon S3: no object ${id}`, { status: 404, code: providerCode('NoSuchKey'), cause: err });
  }
}

export async function listFiles(conn: BedrockConnection, page: FileListInput): Promise<ProviderPage<ProviderFile>> {
  const bucket = bucketOf(conn);
  if (page.purpose !== undefined && page.purpose !== 'fine-tune') return { data: [], hasMore: false, nextAfter: null };
  const input = { Bucket: bucket, Prefix: GATEWAY_PREFIX, MaxKeys: Math.min(page.limit ?? MAX_KEYS, MAX_KEYS), ContinuationToken: page.after };
  const listed = await conn.call('Amazon S3', () => conn.s3().send(new ListObjectsV2Command(input)));
  const data = (listed.Contents ?? []).flatMap((o) => (o.Key ? [s3File({ bucket, key: o.Key }, o.Size, o.LastModified)] : []));
  return { data, hasMore: listed.IsTruncated ?? false, nextAfter: listed.NextContinuationToken ?? null };
}

export async function getFile(conn: BedrockConnection, id: string): Promise<ProviderFile> {
  const head = await onObject(conn, id, (target) => conn.s3().send(new HeadObjectCommand(target)));
  return s3File(objectOf(conn, id), head.ContentLength, head.LastModified);
}

/** The object's bytes, streamed from S3 (destroying the stream closes the connection). */
export async function fileContent(conn: BedrockConnection, id: string): Promise<ProviderContent> {
  const got = await onObject(conn, id, (target) => conn.s3().send(new GetObjectCommand(target)));
  if (!(got.Body instanceof Readable)) throw new GatewayError('provider', 'Amazon S3 sent no content', { status: 502 });
  return { stream: got.Body, bytes: got.ContentLength ?? null, contentType: got.ContentType ?? null };
}

/** S3 deletes a missing key without complaint; the gateway answers 404 for it, as for any file. */
export async function deleteFile(conn: BedrockConnection, id: string): Promise<void> {
  await onObject(conn, id, (target) => conn.s3().send(new HeadObjectCommand(target)));
  await onObject(conn, id, (target) => conn.s3().send(new DeleteObjectCommand(target)));
}
