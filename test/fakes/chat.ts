/**
 * OpenAI's chat-completion shapes for the fakes whose providers speak them (OpenAI, Azure, Together,
 * Fireworks), and a deterministic answer any fake can translate into its own shape (Bedrock Converse,
 * Gemini). The answer names the model and echoes the last user message, so a test can see which
 * model answered and that the (expanded) messages arrived.
 */
import { randomBytes } from 'node:crypto';
import type http from 'node:http';
import { readJsonObject, unixNow, type FakeHttpError, type FakeReply } from './kit';

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

const countTokens = (text: string) => Math.max(1, Math.ceil(text.length / 4));

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
  let finished = false;
  res.on('close', () => {
    if (!finished) options.onAbandoned?.();
  });
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  for (const data of events) {
    if (res.destroyed) return;
    res.write(`data: ${data}\n\n`);
    if (options.delayMs) await new Promise((resolve) => setTimeout(resolve, options.delayMs));
  }
  finished = true;
  res.end();
}

export interface ChatRouteOptions extends Pick<StreamOptions, 'delayMs' | 'onAbandoned'> {
  /** Whether `model` answers here (a base model, a deployed or finished fine-tune). */
  servable(model: string): boolean;
  /** The provider's 400 for a body that is not JSON or lacks `param`. */
  invalid(message: string, param: string | null): FakeHttpError;
  /** The provider's error for a model that does not answer. */
  notFound(model: string): FakeHttpError;
  /** Receives every parsed request body, so tests can see what arrived. */
  record(body: Record<string, unknown>): void;
}

/**
 * An OpenAI-compatible `POST …/chat/completions`: checks `model` and `messages`, then answers a
 * `chat.completion`, or streams chunks when `stream: true` (honouring `stream_options.include_usage`).
 */
export async function answerChat(req: http.IncomingMessage, res: http.ServerResponse, options: ChatRouteOptions): Promise<FakeReply | void> {
  const body = await readJsonObject(req, () => options.invalid('We could not parse the JSON body of your request.', null));
  options.record(body);
  if (typeof body.model !== 'string' || !body.model) throw options.invalid("Missing required parameter: 'model'.", 'model');
  if (!Array.isArray(body.messages) || body.messages.length === 0) throw options.invalid("'messages' must be a non-empty array.", 'messages');
  if (!options.servable(body.model)) throw options.notFound(body.model);
  const answer = fakeAnswer(body.model, body.messages as ChatMessage[]);
  if (body.stream !== true) return { status: 200, body: chatCompletion(body.model, answer) };
  const includeUsage = (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
  await streamChatCompletion(res, body.model, answer, { delayMs: options.delayMs, onAbandoned: options.onAbandoned, includeUsage });
}
