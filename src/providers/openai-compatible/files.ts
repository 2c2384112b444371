/** GET /files, GET /files/{id}, GET /files/{id}/content, DELETE /files/{id}. */
import type { FileListInput, ProviderContent, ProviderFile, ProviderPage } from '../types';
import { apiRequest, apiDownload } from '../api';
import { filePath, type OpenAICompatibleConnection } from './connection';
import { toFile, toPage } from './mappers';
import { openAIFileListSchema, openAIFileSchema } from './schemas';

export async function listFiles(conn: OpenAICompatibleConnection, page: FileListInput): Promise<ProviderPage<ProviderFile>> {
  const query = { purpose: page.purpose, order: page.order, after: page.after, limit: page.limit };
  return toPage(await apiRequest(conn, { answer: openAIFileListSchema, method: 'GET', path: '/files', query }), toFile);
}

export async function getFile(conn: OpenAICompatibleConnection, id: string): Promise<ProviderFile> {
  return toFile(await apiRequest(conn, { answer: openAIFileSchema, method: 'GET', path: filePath(id) }));
}

export function fileContent(conn: OpenAICompatibleConnection, id: string): Promise<ProviderContent> {
  return apiDownload(conn, filePath(id, '/content'));
}

/** Idempotent: a repeat after a lost answer at worst gets a 404. */
export async function deleteFile(conn: OpenAICompatibleConnection, id: string): Promise<void> {
  await apiRequest(conn, { method: 'DELETE', path: filePath(id), idempotent: true });
}
