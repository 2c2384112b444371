/**
 * POST /files as multipart/form-data, streamed (see ../multipart.ts): a purpose known up front goes
 * first, with the exact Content-Length when the size is declared; a purpose a pass-through upload
 * learns only after the file (the OpenAI SDK sends it last) follows the file, and the body goes chunked.
 * Azure answers an upload with no size (`bytes` 0 or absent) while it processes the file: the file's
 * size is then the count of bytes the gateway sent.
 */
import { purposeForm } from '../late-purpose';
import { sendMultipart } from '../multipart';
import type { ProviderFile, UploadInput } from '../types';
import { apiRequest } from '../api';
import { type OpenAICompatibleConnection } from './connection';
import { toFile } from './mappers';
import { openAIFileSchema } from './schemas';

export async function uploadFile(conn: OpenAICompatibleConnection, input: UploadInput): Promise<ProviderFile> {
  let sent = 0;
  const file = { field: 'file', filename: input.filename, bytes: input.bytes, open: input.open, sent: (bytes: number) => (sent = bytes) };
  const form = purposeForm(input.purpose, {}, file);
  const uploaded = await sendMultipart(form, (body, headers) =>
    apiRequest(conn, { answer: openAIFileSchema, method: 'POST', path: '/files', body, headers, upload: true }),
  );
  const answered = toFile(uploaded);
  return answered.bytes > 0 ? answered : { ...answered, bytes: sent };
}
