/**
 * OpenAI's chat-completion shapes for the fakes whose providers speak them (OpenAI, Azure, Together,
 * Fireworks), and a deterministic answer any fake can translate into its own shape (Bedrock Converse,
 * Gemini). The answer names the model and echoes the last user message, so a test can see which
 * model answered and that the (expanded) messages arrived.
 */
import { randomBytes } from 'node:crypto';
import type http from 'node:http';
import { unixNow } from './kit';

export interface ChatMessage {
  role: string;
  content: unknown;
}

export interface FakeAnswer {
  text: string;
  /** The text split into the pieces a stream sends one by one. */
  pieces: string[];
  promptTokens: number;
  completionTokens: number;
}

/** Plain text of a message's content: a string, or OpenAI's array of `{type: "text", text}` parts. */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part) => (part && typeof part === 'object' && 'text' in part ? String((part as { text: unknown }).text) : '')).join('');
  return '';
}

/** A rough token count (four characters a token), the same in every fake. */
export const countTokens = (text: string) => Math.max(1, Math.ceil(text.length / 4));

/** The deterministic answer of `model` to `messages`. */
export function fakeAnswer(model: string, messages: ChatMessage[]): FakeAnswer {
  const lastUser = [...messages].reverse().find((m) => m.role === 'user');
  const text = `Answer from ${model}: ${lastUser ? textOf(lastUser.content) : ''}`.trim();
  const pieces = text.match(/\S+\s*/g) ?? [text];
  const promptTokens = messages.reduce((sum, m) => sum + countTokens(textOf(m.content)), 0);
  return { text, pieces, promptTokens, completionTokens: countTokens(text) };
}

const usageOf = (a: FakeAnswer) => ({ prompt_tokens: a.promptTokens, completion_tokens: a.completionTokens, total_tokens: a.promptTokens + a.completionTokens });

/** A non-streamed `chat.completion`. */
export function chatCompletion(model: string, answer: FakeAnswer) {
  return {
    id: `chatcmpl-${randomBytes(12).toString('hex')}`,
    object: 'chat.completion',
    created: unixNow(),
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: answer.text, refusal: null }, logprobs: null, finish_reason: 'stop' }],
    usage: usageOf(answer),
  };
}

export interface StreamOptions {
  /** Pause between chunks, so a test can observe streaming and disconnect midway. */
  delayMs?: number;
  /** OpenAI's `stream_options.include_usage`: a last chunk with `usage` and no choices. */
  includeUsage?: boolean;
  /** Called when the client goes away before the stream ended. */
  onAbandoned?: () => void;
}

/** Streams `chat.completion.chunk`s as server-sent events, one write per chunk, then `[DONE]`. */
export async function streamChatCompletion(res: http.ServerResponse, model: string, answer: FakeAnswer, options: StreamOptions = {}): Promise<void> {
  const id = `chatcmpl-${randomBytes(12).toString('hex')}`;
  const created = unixNow();
  const chunk = (delta: Record<string, unknown>, finish: string | null, extra: Record<string, unknown> = {}) =>
    JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...extra });
  const events = [
    chunk({ role: 'assistant', content: '' }, null),
    ...answer.pieces.map((piece) => chunk({ content: piece }, null)),
    chunk({}, 'stop'),
    ...(options.includeUsage ? [JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [], usage: usageOf(answer) })] : []),
    '[DONE]',
  ];
  await writeEvents(res, events, options);
}

/**
 * Writes server-sent events one by one (`data: …`), pausing between them; reports a client that
 * left before the end. Other fakes' streams (Gemini's SSE) use it with their own event bodies.
 */
export async function writeEvents(res: http.ServerResponse, events: string[], options: Pick<StreamOptions, 'delayMs' | 'onAbandoned'> = {}): Promise<void> {
  const headers = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' };
  await writeChunks(res, headers, events.map((data) => `data: ${data}\n\n`), options);
}

/**
 * Writes a 200 response one chunk per write, pausing between chunks, and reports a client that left
 * before the end: the common ground of every streamed answer (SSE events, Gemini's streamed JSON array).
 */
export async function writeChunks(
  res: http.ServerResponse,
  headers: Record<string, string>,
  chunks: string[],
  options: Pick<StreamOptions, 'delayMs' | 'onAbandoned'> = {},
): Promise<void> {
  let finished = false;
  res.on('close', () => {
    if (!finished) options.onAbandoned?.();
  });
  res.writeHead(200, headers);
  for (const chunk of chunks) {
    if (res.destroyed) return;
    res.write(chunk);
    if (options.delayMs) await new Promise((resolve) => setTimeout(resolve, options.delayMs));
  }
  finished = true;
  res.end();
}
