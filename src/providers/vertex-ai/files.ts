/**
 * Files are Cloud Storage objects under the gateway's prefix in the configured bucket; a file id is
 * the object's `gs://` URI. List pages with GCS's own page token as `after`; object names sort newest
 * first (see upload-file.ts), which is OpenAI's default order and the only one GCS can page in.
 */
import { invalidField } from '../../errors';
import type { FileListInput, ProviderContent, ProviderFile, ProviderPage } from '../types';
import { urlPath } from '../url';
import { googleDownload, googleFetch, STORAGE, storageUrl, type VertexConnection } from './connection';
import { bucketOf, FILE_PREFIX, gatewayFile, gsUri, objectPath, type GcsLocation } from './references';
import { gcsObjectListSchema, gcsObjectSchema, parseAnswer, unixSeconds, type GcsObject } from './wire';

/** Every file here is a tuning dataset. */
export const FILE_PURPOSE = 'fine-tune';

export function toFile(object: GcsObject): ProviderFile {
  return {
    id: gsUri({ bucket: object.bucket, object: object.name }),
    bytes: object.size,
    createdAt: unixSeconds(object.timeCreated),
    filename: object.metadata?.filename ?? object.name.slice(object.name.lastIndexOf('/') + 1),
    purpose: FILE_PURPOSE,
    status: 'processed',
    statusDetails: null,
  };
}

export async function listFiles(conn: VertexConnection, page: FileListInput): Promise<ProviderPage<ProviderFile>> {
  if (page.order === 'asc') throw invalidField('order', 'must be "desc": Vertex AI files (Cloud Storage objects) are listed newest first only');
  const bucket = bucketOf(conn);
  if (page.purpose !== undefined && page.purpose !== FILE_PURPOSE) return { data: [], hasMore: false, nextAfter: null };
  const query = { prefix: FILE_PREFIX, maxResults: page.limit, pageToken: page.after };
  const url = storageUrl(conn, urlPath`storage/v1/b/${bucket}/o`, query);
  const list = parseAnswer(gcsObjectListSchema, await googleFetch(conn, STORAGE, { method: 'GET', url }), STORAGE, 'object list');
  return { data: (list.items ?? []).map(toFile), hasMore: list.nextPageToken !== undefined, nextAfter: list.nextPageToken ?? null };
}

export async function getFile(conn: VertexConnection, id: string): Promise<ProviderFile> {
  const url = storageUrl(conn, objectPath(gatewayFile(conn, id)));
  return toFile(parseAnswer(gcsObjectSchema, await googleFetch(conn, STORAGE, { method: 'GET', url }), STORAGE, 'object'));
}

/** The object's bytes as stored: the dataset in Gemini's format. */
export async function fileContent(conn: VertexConnection, id: string): Promise<ProviderContent> {
  return (await googleDownload(conn, STORAGE, { method: 'GET', url: storageUrl(conn, objectPath(gatewayFile(conn, id)), { alt: 'media' }) })).content;
}

/** Idempotent: a repeat after a lost answer at worst gets a 404. */
export async function deleteObject(conn: VertexConnection, location: GcsLocation): Promise<void> {
  await googleFetch(conn, STORAGE, { method: 'DELETE', url: storageUrl(conn, objectPath(location)), idempotent: true });
}

export const deleteFile = (conn: VertexConnection, id: string): Promise<void> => deleteObject(conn, gatewayFile(conn, id));
