/**
 * Datasets as the gateway's files: `GET …/datasets` (Fireworks' page token is the cursor),
 * `GET`/`DELETE …/datasets/{id}`, and the content through `:getDownloadEndpoint`'s signed URLs
 * (streamed; a dataset of several files is served as their concatenation, in name order).
 */
import { Readable } from 'node:stream';
import { GatewayError, providerCode } from '../../errors';
import { providerDownload } from '../http';
import { checkSignedUrl } from '../signed-urls';
import type { FileListInput, ProviderContent, ProviderFile, ProviderPage } from '../types';
import { controlRequest, resourcePath, TITLE, type FireworksConnection } from './connection';
import { toFile } from './mappers';
import { datasetListSchema, datasetSchema, uploadEndpointSchema } from './schemas';

/** Fireworks caps a page at 200. */
const MAX_PAGE_SIZE = 200;

export async function listFiles(conn: FireworksConnection, page: FileListInput): Promise<ProviderPage<ProviderFile>> {
  // Every dataset is fine-tuning data: another purpose lists nothing.
  if (page.purpose !== undefined && page.purpose !== 'fine-tune') return { data: [], hasMore: false, nextAfter: null };
  const query = {
    pageSize: page.limit === undefined ? undefined : Math.min(page.limit, MAX_PAGE_SIZE),
    pageToken: page.after,
    orderBy: `createTime ${page.order ?? 'desc'}`,
  };
  const list = await controlRequest(conn, { answer: datasetListSchema, method: 'GET', path: '/datasets', query });
  return { data: (list.datasets ?? []).map((d) => toFile(conn, d)), hasMore: !!list.nextPageToken, nextAfter: list.nextPageToken || null };
}

export async function getFile(conn: FireworksConnection, id: string): Promise<ProviderFile> {
  return toFile(conn, await controlRequest(conn, { answer: datasetSchema, method: 'GET', path: resourcePath(conn, 'datasets', id) }));
}

/** Idempotent: a repeat after a lost answer at worst gets a 404. */
export async function deleteFile(conn: FireworksConnection, id: string): Promise<void> {
  await controlRequest(conn, { method: 'DELETE', path: resourcePath(conn, 'datasets', id), idempotent: true });
}

export async function fileContent(conn: FireworksConnection, id: string): Promise<ProviderContent> {
  const endpoint = await controlRequest(conn, {
    answer: uploadEndpointSchema,
    method: 'GET',
    path: resourcePath(conn, 'datasets', id, ':getDownloadEndpoint'),
  });
  // Every URL is checked before the first is fetched: a dataset is served whole or not at all.
  const urls = Object.entries(endpoint.filenameToSignedUrls ?? {})
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([, url]) => checkSignedUrl(url, conn.signedUrls));
  if (urls.length === 0) throw new GatewayError('provider', `${TITLE} dataset '${id}' has no uploaded data`, { status: 404, code: providerCode('not_found') });
  // The signed URLs are the bucket's: they get no API key.
  const download = (url: string) => providerDownload({ provider: `${TITLE} dataset storage`, method: 'GET', url, redact: conn.secrets, policy: conn.http });
  if (urls.length === 1) return download(urls[0]);
  return { stream: Readable.from(concatenated(urls, download)), bytes: null, contentType: 'application/octet-stream' };
}

async function* concatenated(urls: string[], download: (url: string) => Promise<ProviderContent>): AsyncGenerator<Buffer> {
  for (const url of urls) yield* (await download(url)).stream;
}
