/**
 * OpenAI's chat-completion shapes for the fakes whose providers speak them (OpenAI, Azure, Together,
 * Fireworks), and a deterministic answer any fake can translate into its own shape (Bedrock Converse,
 * Gemini). The answer names the model and echoes the last user message, so a test can see which
 * model answered and that the (expanded) messages arrived.
 */
import { randomBytes } from 'node:crypto';
import type http from 'node:http';
import { readJsonObject, unixNow, writeChunks, type FakeHttpError, type FakeReply } from './kit';

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
  if (Array.isArray(content))
    return content.map((part) => (part && typeof part === 'object' && 'text' in part ? String((part as { text: unknown }).text) : '')).join('');
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

const usageOf = (a: FakeAnswer) => ({
  prompt_tokens: a.promptTokens,
  completion_tokens: a.completionTokens,
  total_tokens: a.promptTokens + a.completionTokens,
});

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

/**
 * The `chat.completion.chunk`s a stream of `answer` sends, in order: the role, one per piece, the
 * finish reason, and (with `includeUsage`) a last chunk with `usage` and no choices.
 */
export function chatCompletionChunks(model: string, answer: FakeAnswer, includeUsage = false): Record<string, unknown>[] {
  const id = `chatcmpl-${randomBytes(12).toString('hex')}`;
  const created = unixNow();
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) => ({ id, object: 'chat.completion.chunk', created, model, choices, ...extra });
  const choice = (delta: Record<string, unknown>, finish: string | null) => ({ index: 0, delta, logprobs: null, finish_reason: finish });
  return [
    chunk([choice({ role: 'assistant', content: '' }, null)]),
    ...answer.pieces.map((piece) => chunk([choice({ content: piece }, null)])),
    chunk([choice({}, 'stop')]),
    ...(includeUsage ? [chunk([], { usage: usageOf(answer) })] : []),
  ];
}

/** Streams `chat.completion.chunk`s as server-sent events, one write per chunk, then `[DONE]`. */
export async function streamChatCompletion(res: http.ServerResponse, model: string, answer: FakeAnswer, options: StreamOptions = {}): Promise<void> {
  const chunks = chatCompletionChunks(model, answer, options.includeUsage);
  await writeEvents(res, [...chunks.map((c) => JSON.stringify(c)), '[DONE]'], options);
}

export interface ChatRequest {
  /** The body as received, for tests to assert on. */
  body: Record<string, unknown>;
  model: string | undefined;
  messages: ChatMessage[];
  stream: boolean;
  includeUsage: boolean;
}

/** Builds the provider's 400 for an invalid chat request (OpenAI words them with a param and a code). */
export type ChatRequestError = (message: string, param: string, code: string | null) => Error;

const ROLES = ['system', 'developer', 'user', 'assistant', 'tool', 'function'];

/** Checks a chat-completion body as OpenAI does: `messages` a non-empty array of messages with a known role. */
export function parseChatRequest(body: Record<string, unknown>, invalid: ChatRequestError): ChatRequest {
  const { messages, stream = false } = body;
  if (messages === undefined) throw invalid("Missing required parameter: 'messages'.", 'messages', 'missing_required_parameter');
  if (!Array.isArray(messages)) {
    throw invalid(`Invalid type for 'messages': expected an array, but got ${typeof messages} instead.`, 'messages', 'invalid_type');
  }
  if (messages.length === 0) {
    throw invalid("Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.", 'messages', 'empty_array');
  }
  messages.forEach((message: unknown, i) => {
    const role = message && typeof message === 'object' ? (message as { role?: unknown }).role : undefined;
    if (typeof role !== 'string') throw invalid(`Missing required parameter: 'messages[${i}].role'.`, `messages[${i}].role`, 'missing_required_parameter');
    if (!ROLES.includes(role)) {
      throw invalid(`Invalid value: '${role}'. Supported values are: ${ROLES.map((r) => `'${r}'`).join(', ')}.`, `messages[${i}].role`, 'invalid_value');
    }
  });
  if (typeof stream !== 'boolean') throw invalid(`Invalid type for 'stream': expected a boolean, but got ${typeof stream} instead.`, 'stream', 'invalid_type');
  const streamOptions = body.stream_options as { include_usage?: unknown } | null | undefined;
  if (streamOptions != null && !stream) throw invalid("The 'stream_options' parameter is only allowed when 'stream' is enabled.", 'stream_options', null);
  return {
    body,
    model: typeof body.model === 'string' ? body.model : undefined,
    messages: messages as ChatMessage[],
    stream,
    includeUsage: streamOptions?.include_usage === true,
  };
}

/**
 * Why a fine-tuning dataset is not OpenAI chat JSONL (naming the first bad line), or undefined when it
 * is: every non-blank line a JSON object whose `messages` is a non-empty array of messages with a
 * known role, at least one of them from the assistant.
 */
export function findChatJsonlError(content: Buffer): string | undefined {
  const lines = content.toString('utf8').split('\n');
  for (const [i, line] of lines.entries()) {
    if (!line.trim()) continue;
    const problem = chatLineProblem(line);
    if (problem) return `Line ${i + 1}: ${problem}`;
  }
  return undefined;
}

function chatLineProblem(line: string): string | undefined {
  let example: unknown;
  try {
    example = JSON.parse(line);
  } catch {
    return 'not valid JSON';
  }
  const messages = example && typeof example === 'object' ? (example as { messages?: unknown }).messages : undefined;
  if (!Array.isArray(messages) || messages.length === 0) return "missing a non-empty 'messages' array";
  const roles = messages.map((m: unknown) => (m && typeof m === 'object' ? (m as { role?: unknown }).role : undefined));
  const unknown = roles.findIndex((role) => typeof role !== 'string' || !ROLES.includes(role));
  if (unknown >= 0) return `messages[${unknown}] has no valid role`;
  if (!roles.includes('assistant')) return 'no assistant message to learn from';
  return undefined;
}

/**
 * Writes server-sent events one by one (`data: …`), pausing between them; reports a client that
 * left before the end. Other fakes' streams (Gemini's SSE) use it with their own event bodies.
 */
export async function writeEvents(res: http.ServerResponse, events: string[], options: Pick<StreamOptions, 'delayMs' | 'onAbandoned'> = {}): Promise<void> {
  const head = { status: 200, headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' } };
  await writeChunks(
    res,
    head,
    events.map((data) => `data: ${data}\n\n`),
    options,
  );
}

export interface ChatRouteOptions extends Pick<StreamOptions, 'delayMs' | 'onAbandoned'> {
  /** Whether `model` answers here (a base model, a deployed or finished fine-tune). */
  servable(model: string): boolean;
  /** The provider's 400 for a body that is not JSON or is not a valid chat request. */
  invalid(message: string, param: string | null): FakeHttpError;
  /** The provider's error for a model that does not answer. */
  notFound(model: string): FakeHttpError;
  /** Receives every parsed request body, so tests can see what arrived. */
  record(body: Record<string, unknown>): void;
}

/**
 * An OpenAI-compatible `POST …/chat/completions`: checks the request, then answers a
 * `chat.completion`, or streams chunks when `stream: true` (honouring `stream_options.include_usage`).
 */
export async function answerChat(req: http.IncomingMessage, res: http.ServerResponse, options: ChatRouteOptions): Promise<FakeReply | void> {
  const body = await readJsonObject(req, () => options.invalid('We could not parse the JSON body of your request.', null));
  options.record(body);
  const chat = parseChatRequest(body, (message, param) => options.invalid(message, param));
  if (!chat.model) throw options.invalid("Missing required parameter: 'model'.", 'model');
  if (!options.servable(chat.model)) throw options.notFound(chat.model);
  const answer = fakeAnswer(chat.model, chat.messages);
  if (!chat.stream) return { status: 200, body: chatCompletion(chat.model, answer) };
  await streamChatCompletion(res, chat.model, answer, { delayMs: options.delayMs, onAbandoned: options.onAbandoned, includeUsage: chat.includeUsage });
}
