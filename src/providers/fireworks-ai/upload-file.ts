/**
 * A dataset upload, Fireworks' way: create the dataset (`POST …/datasets`), then send the JSONL
 * (OpenAI's chat format is Fireworks' own). Below 150 MB it goes in one multipart `:upload`; larger
 * ones take the signed-URL path: `:getUploadEndpoint` with the exact byte count, a `PUT` of exactly
 * that many bytes to the signed URL (which commits to the size), then `:validateUpload`. Either way
 * the bytes are streamed. A dataset left half-made by a failure is deleted again.
 */
import { randomBytes } from 'node:crypto';
import { GatewayError, invalidField } from '../../errors';
import { providerFetch } from '../http';
import { withPurpose } from '../late-purpose';
import { sendMultipart } from '../multipart';
import { checkSignedUrl } from '../signed-urls';
import type { ProviderFile, UploadInput } from '../types';
import { controlRequest, RESOURCE_ID, resourcePath, slug, TITLE, type FireworksConnection } from './connection';
import { deleteFile } from './datasets';
import { toFile } from './mappers';
import { datasetSchema, uploadEndpointSchema } from './schemas';
import { withExactSize, type SizedContent } from './spool';

/** Fireworks' limit for the one-request `:upload` (documented as 150 MB); larger files take the signed URL. */
export const DIRECT_UPLOAD_LIMIT = 150 * 1000 * 1000;
const MAX_DISPLAY_NAME = 63;

export function uploadFile(conn: FireworksConnection, input: UploadInput): Promise<ProviderFile> {
  // The spool has read a late purpose by the time it has the size: it is checked before any dataset is made.
  return withExactSize(input, async (content) => {
    const store = () => createDataset(conn, input.filename, content);
    const { stored, purpose } = await withPurpose(content.purpose, { check: datasetPurpose, store, undo: (file) => deleteFile(conn, file.id) });
    return { ...stored, purpose };
  });
}

/** Fine-tuning data, and OpenAI batch files (kept as written: client-mode batches read them at create). */
function datasetPurpose(purpose: string): void {
  if (purpose !== 'fine-tune' && purpose !== 'batch') {
    throw invalidField('purpose', `must be 'fine-tune' or 'batch': ${TITLE} datasets hold fine-tuning data and batch input`);
  }
}

async function createDataset(conn: FireworksConnection, filename: string, content: SizedContent): Promise<ProviderFile> {
  const id = datasetId(filename);
  const created = await controlRequest(conn, {
    answer: datasetSchema,
    method: 'POST',
    path: '/datasets',
    json: { datasetId: id, dataset: { displayName: filename.slice(0, MAX_DISPLAY_NAME), userUploaded: {} } },
  });
  try {
    await uploadDatasetContent(conn, id, filename, content);
    const dataset = await controlRequest(conn, { answer: datasetSchema, method: 'GET', path: resourcePath(conn, 'datasets', created.name) });
    return { ...toFile(conn, dataset), bytes: content.bytes, filename };
  } catch (err) {
    await deleteFile(conn, id).catch(() => undefined);
    throw err;
  }
}

/** A dataset's bytes: the one-request `:upload` when small enough, else a signed URL and `:validateUpload`. */
export const uploadDatasetContent = (conn: FireworksConnection, id: string, filename: string, content: SizedContent): Promise<unknown> =>
  content.bytes < DIRECT_UPLOAD_LIMIT ? uploadDirect(conn, id, filename, content) : uploadSigned(conn, id, filename, content);

/** A new dataset id: the file's name made an id, and a random tail so names never collide. */
function datasetId(filename: string): string {
  const stem = slug(filename.replace(/\.[^.]*$/, ''), 40) || 'dataset';
  const id = `${stem}-${randomBytes(4).toString('hex')}`;
  return RESOURCE_ID.test(id) ? id : `dataset-${randomBytes(4).toString('hex')}`;
}

function uploadDirect(conn: FireworksConnection, id: string, filename: string, content: SizedContent): Promise<unknown> {
  const file = { field: 'file', filename, bytes: content.bytes, open: content.open };
  return sendMultipart({ fields: {}, file }, (body, headers) =>
    controlRequest(conn, { method: 'POST', path: resourcePath(conn, 'datasets', id, ':upload'), body, headers, upload: true }),
  );
}

async function uploadSigned(conn: FireworksConnection, id: string, filename: string, content: SizedContent): Promise<void> {
  const endpoint = await controlRequest(conn, {
    answer: uploadEndpointSchema,
    method: 'POST',
    path: resourcePath(conn, 'datasets', id, ':getUploadEndpoint'),
    json: { filenameToSize: { [filename]: String(content.bytes) } },
  });
  const signed = endpoint.filenameToSignedUrls?.[filename];
  if (!signed) throw new GatewayError('provider', `${TITLE} gave no upload URL for the dataset`, { status: 502 });
  const url = checkSignedUrl(signed, conn.signedUrls);
  // The signed URL is the bucket's, not Fireworks': it gets no API key, and its signature commits to this exact size.
  await providerFetch({
    provider: `${TITLE} dataset storage`,
    method: 'PUT',
    url,
    headers: {
      'content-type': 'application/octet-stream',
      'content-length': String(content.bytes),
      'x-goog-content-length-range': `${content.bytes},${content.bytes}`,
    },
    body: content.open(),
    upload: true,
    redact: conn.secrets,
    policy: conn.http,
  });
  await controlRequest(conn, { method: 'POST', path: resourcePath(conn, 'datasets', id, ':validateUpload'), json: {} });
}
