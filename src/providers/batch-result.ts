/**
 * OpenAI's `BatchRequestOutput` lines a provider's batch adapter reads its results into (batch.ts): a
 * success carries the answer as a `chat.completion` body with its usage; a request the provider refused
 * carries the provider's status code and message in OpenAI's error body, so that it lands in the
 * batch's error file with that status.
 */
import { randomBytes } from 'node:crypto';
import { StringDecoder } from 'node:string_decoder';
import type { BatchResultLine } from './batch';
import { toCompletionJson } from './chat-json';
import type { ChatCompletion } from './types';

const lineId = () => `batch_req_${randomBytes(16).toString('hex')}`;

/** A success whose body is already OpenAI's `chat.completion` (an OpenAI-shaped provider's). */
export const answeredLine = (customId: string, requestId: string, body: unknown): BatchResultLine => ({
  id: lineId(),
  custom_id: customId,
  response: { status_code: 200, request_id: requestId, body },
  error: null,
});

export const succeededLine = (customId: string, requestId: string, completion: ChatCompletion): BatchResultLine =>
  answeredLine(customId, requestId, toCompletionJson(completion));

export function failedLine(customId: string, requestId: string, status: number, message: string, code: string | null = null): BatchResultLine {
  const type = status >= 500 ? 'server_error' : 'invalid_request_error';
  return {
    id: lineId(),
    custom_id: customId,
    response: { status_code: status, request_id: requestId, body: { error: { message, type, param: null, code } } },
    error: null,
  };
}

/** The non-blank lines of a streamed text (UTF-8 characters split between chunks put back together). */
export async function* textLines(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8');
  let pending = '';
  for await (const chunk of chunks) {
    pending += decoder.write(Buffer.from(chunk));
    let newline: number;
    while ((newline = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, newline).trim();
      pending = pending.slice(newline + 1);
      if (line) yield line;
    }
  }
  pending += decoder.end();
  if (pending.trim()) yield pending.trim();
}
