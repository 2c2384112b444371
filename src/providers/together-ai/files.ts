/**
 * Together's files: the multipart `POST /files/upload` (streamed, the purpose after the file when a
 * pass-through upload learns it last), and `GET /files` (not paged by Together: filtered, ordered
 * and paged here), `GET /files/{id}`, `GET /files/{id}/content`, `DELETE /files/{id}`.
 */
import { purposeForm } from '../late-purpose';
import { sendMultipart } from '../multipart';
import { pageOf } from '../paging';
import type { FileListInput, ProviderContent, ProviderFile, ProviderPage, UploadInput } from '../types';
import { apiDownload, apiRequest } from '../api';
import { filePath, type TogetherConnection } from './connection';
import { toFile } from './mappers';
import { togetherFileListSchema, togetherFileSchema } from './schemas';

const FILE_TYPES = ['jsonl', 'parquet', 'csv'];

export async function uploadFile(conn: TogetherConnection, input: UploadInput): Promise<ProviderFile> {
  const named = { file_name: input.filename, file_type: fileType(input.filename) };
  const uploaded = await sendMultipart(
    purposeForm(input.purpose, named, { field: 'file', filename: input.filename, bytes: input.bytes, open: input.open }),
    (body, headers) => apiRequest(conn, { answer: togetherFileSchema, method: 'POST', path: '/files/upload', body, headers, upload: true }),
  );
  return toFile(uploaded);
}

/** Together's file type, from the name's extension (JSON Lines unless it says Parquet or CSV). */
function fileType(filename: string): string {
  const extension = filename.split('.').pop()?.toLowerCase() ?? '';
  return FILE_TYPES.includes(extension) ? extension : 'jsonl';
}

export async function listFiles(conn: TogetherConnection, page: FileListInput): Promise<ProviderPage<ProviderFile>> {
  const list = await apiRequest(conn, { answer: togetherFileListSchema, method: 'GET', path: '/files' });
  const files = (list.data ?? []).map(toFile).filter((f) => page.purpose === undefined || f.purpose === page.purpose);
  // Newest first unless asked otherwise; files of the same second keep Together's (upload) order, reversed for newest first.
  const ordered = page.order === 'asc' ? files.sort((a, b) => a.createdAt - b.createdAt) : files.reverse().sort((a, b) => b.createdAt - a.createdAt);
  return pageOf(ordered, { after: page.after, limit: page.limit });
}

export async function getFile(conn: TogetherConnection, id: string): Promise<ProviderFile> {
  return toFile(await apiRequest(conn, { answer: togetherFileSchema, method: 'GET', path: filePath(id) }));
}

export function fileContent(conn: TogetherConnection, id: string): Promise<ProviderContent> {
  return apiDownload(conn, filePath(id, '/content'));
}

/** Idempotent: a repeat after a lost answer at worst gets a 404. */
export async function deleteFile(conn: TogetherConnection, id: string): Promise<void> {
  await apiRequest(conn, { method: 'DELETE', path: filePath(id), idempotent: true });
}
