/**
 * A dataset upload: one streamed `multipart/related` request to Cloud Storage's JSON API (object
 * metadata, then the content as it is converted), so a large dataset never sits in memory. Object
 * names start with a reversed timestamp, so GCS's name order lists the newest upload first.
 *
 * A purpose that comes after the file (../late-purpose.ts) is checked once the content is stored, and
 * the object removed again when it is not a dataset.
 */
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { GatewayError, invalidField } from '../../errors';
import { withPurpose } from '../late-purpose';
import type { ProviderFile, UploadInput } from '../types';
import { urlPath } from '../url';
import { googleUpload, STORAGE, storageUrl, type VertexConnection } from './connection';
import { deleteObject, FILE_PURPOSE, toFile } from './files';
import { bucketOf, FILE_PREFIX, type GcsLocation } from './references';
import { gcsObjectSchema, parseAnswer } from './wire';

const CONTENT_TYPE = 'application/jsonl';
/** Beyond Date.now() for centuries: reversed timestamps keep their width. */
const TIME_CEILING = 10 ** 13;

export async function uploadFile(conn: VertexConnection, input: UploadInput): Promise<ProviderFile> {
  const location: GcsLocation = { bucket: bucketOf(conn), object: objectName(input.filename) };
  const { stored, purpose } = await withPurpose(input.purpose, {
    check: checkPurpose,
    store: () => store(conn, input, location),
    undo: () => deleteObject(conn, location),
  });
  return { ...stored, purpose };
}

async function store(conn: VertexConnection, input: UploadInput, location: GcsLocation): Promise<ProviderFile> {
  const boundary = `gateway-${randomBytes(16).toString('hex')}`;
  const metadata = { name: location.object, contentType: CONTENT_TYPE, metadata: { filename: input.filename } };
  const url = storageUrl(conn, urlPath`upload/storage/v1/b/${location.bucket}/o`, { uploadType: 'multipart' });
  // The HTTP client rewraps errors thrown by a body stream, so the content reports its own failure here.
  const report: { failure?: GatewayError } = {};
  let answer: unknown;
  try {
    answer = await googleUpload(conn, url, Readable.from(multipartBody(boundary, metadata, input, report)), {
      'content-type': `multipart/related; boundary=${boundary}`,
    });
  } catch (err) {
    throw report.failure ?? err;
  }
  return toFile(parseAnswer(gcsObjectSchema, answer, STORAGE, 'object'));
}

/** Tuning datasets, and OpenAI batch files (stored as written: client-mode batches read them at create). */
function checkPurpose(purpose: string): void {
  if (purpose !== FILE_PURPOSE && purpose !== 'batch') {
    throw invalidField('purpose', `must be '${FILE_PURPOSE}' or 'batch': Vertex AI files are tuning datasets and batch input`);
  }
}

/** `gateway-files/<reversed ms>-<random>-<filename>`: newest first in name order, readable in the console. */
function objectName(filename: string): string {
  const reversed = String(TIME_CEILING - Date.now()).padStart(13, '0');
  const readable = filename.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 100);
  return `${FILE_PREFIX}${reversed}-${randomBytes(6).toString('hex')}-${readable}`;
}

async function* multipartBody(boundary: string, metadata: object, input: UploadInput, report: { failure?: GatewayError }): AsyncGenerator<Buffer> {
  yield Buffer.from(`--${boundary}\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n${JSON.stringify(metadata)}\r\n`);
  yield Buffer.from(`--${boundary}\r\nContent-Type: ${CONTENT_TYPE}\r\n\r\n`);
  try {
    for await (const chunk of input.open()) yield typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
  } catch (err) {
    // Our own content failed (a line that cannot be converted, a client that went away): not the provider's fault.
    report.failure = err instanceof GatewayError ? err : new GatewayError('internal', `Could not read upload content for '${input.filename}'`);
    throw err;
  }
  yield Buffer.from(`\r\n--${boundary}--\r\n`);
}
