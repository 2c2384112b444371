/**
 * POST /files as multipart/form-data, streamed (see ../multipart.ts): a purpose known up front goes
 * first, with the exact Content-Length when the size is declared; a purpose a pass-through upload
 * learns only after the file (the OpenAI SDK sends it last) follows the file, and the body goes chunked.
 */
import type { Form } from '../multipart';
import { sendMultipart } from '../multipart';
import type { ProviderFile, UploadInput } from '../types';
import { apiRequest } from '../api';
import { type OpenAICompatibleConnection } from './connection';
import { toFile, type OpenAIFile } from './mappers';

export async function uploadFile(conn: OpenAICompatibleConnection, input: UploadInput): Promise<ProviderFile> {
  const file = { field: 'file', filename: input.filename, bytes: input.bytes, open: input.open };
  const purpose = input.purpose;
  const form: Form = typeof purpose === 'string' ? { fields: { purpose }, file } : { fields: {}, file, after: purpose.then((p) => ({ purpose: p })) };
  const uploaded = await sendMultipart(form, (body, headers) => apiRequest<OpenAIFile>(conn, { method: 'POST', path: '/files', body, headers, upload: true }));
  return toFile(uploaded);
}
