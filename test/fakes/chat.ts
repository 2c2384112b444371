/**
 * OpenAI's chat-completion shapes for the fakes whose providers speak them (OpenAI, Azure, Together,
 * Fireworks), and a deterministic answer any fake can translate into its own shape (Bedrock Converse,
 * Gemini). The answer names the model and echoes the last user message, so a test can see which
 * model answered and that the (expanded) messages arrived.
 */
import { randomBytes } from 'node:crypto';
import type http from 'node:http';
import { argumentPieces, describeImage, fakeReply, type FakeAnswer, type FakeConversation, type FakeTurn } from './fake-model';
import { readJsonObject, unixNow, writeChunks, type FakeHttpError, type FakeReply } from './kit';

export { countTokens, type FakeAnswer } from './fake-model';

export interface ChatMessage {
  role: string;
  content: unknown;
  tool_calls?: unknown;
  tool_call_id?: unknown;
}

/** Plain text of a message's content: a string, or OpenAI's parts (text as it is, images described). */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part: Record<string, any>) => {
      if (part?.type === 'image_url') return describeImage(String(part.image_url?.url ?? ''));
      return part && typeof part === 'object' && 'text' in part ? String(part.text) : '';
    })
    .join('');
}

const turnOf = (m: ChatMessage): FakeTurn => ({ role: m.role === 'developer' ? 'system' : (m.role as FakeTurn['role']), text: textOf(m.content) });

/** The deterministic answer of `model` to text `messages` (what a test expects a fake to answer). */
export const fakeAnswer = (model: string, messages: ChatMessage[]): FakeAnswer => fakeReply(model, { turns: messages.map(turnOf) });

/** OpenAI's request as the fake model's conversation. */
export function conversationOf(body: Record<string, any>): FakeConversation {
  const choice = body.tool_choice;
  const format = body.response_format;
  return {
    turns: (body.messages as ChatMessage[]).map(turnOf),
    tools: ((body.tools ?? []) as Record<string, any>[]).map((t) => ({ name: String(t.function?.name), schema: t.function?.parameters })),
    toolChoice: typeof choice === 'object' && choice ? { name: String(choice.function?.name) } : choice,
    json: format?.type === 'json_object' ? {} : format?.type === 'json_schema' ? { schema: format.json_schema?.schema } : undefined,
  };
}

/** What of the request shapes the answer beyond the conversation: choices and log probabilities. */
export interface AnswerShape {
  n?: number;
  logprobs?: boolean;
  topLogprobs?: number;
}

export const shapeOf = (body: Record<string, any>): AnswerShape => ({ n: body.n ?? 1, logprobs: body.logprobs === true, topLogprobs: body.top_logprobs ?? 0 });

const usageOf = (a: FakeAnswer) => ({
  prompt_tokens: a.promptTokens,
  completion_tokens: a.completionTokens,
  total_tokens: a.promptTokens + a.completionTokens,
  prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
  completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
});

/** OpenAI's log probabilities of `pieces` (each piece one token), with `top` alternatives each. */
const logprobsOf = (pieces: string[], top: number) => ({
  content: pieces.map((token) => {
    const entry = (t: string, logprob: number) => ({ token: t, logprob, bytes: [...Buffer.from(t)] });
    return { ...entry(token, -0.25), top_logprobs: Array.from({ length: top }, (_, i) => entry(i === 0 ? token : `${token}~${i}`, -0.25 * (i + 1))) };
  }),
  refusal: null,
});

const finishOf = (a: FakeAnswer) => (a.toolCalls.length ? 'tool_calls' : 'stop');

/** A non-streamed `chat.completion`. */
export function chatCompletion(model: string, answer: FakeAnswer, shape: AnswerShape = {}) {
  const message = {
    role: 'assistant',
    content: answer.toolCalls.length || answer.refusal ? null : answer.text,
    refusal: answer.refusal,
    ...(answer.toolCalls.length
      ? { tool_calls: answer.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })) }
      : {}),
  };
  const logprobs = shape.logprobs ? logprobsOf(answer.pieces, shape.topLogprobs ?? 0) : null;
  return {
    id: `chatcmpl-${randomBytes(12).toString('hex')}`,
    object: 'chat.completion',
    created: unixNow(),
    model,
    choices: Array.from({ length: shape.n ?? 1 }, (_, index) => ({ index, message, logprobs, finish_reason: finishOf(answer) })),
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
  /** Tool-call arguments streamed in pieces of this many characters (default: in thirds). */
  argumentPieceChars?: number;
}

/**
 * The `chat.completion.chunk`s a stream of `answer` sends, in order, for each choice: the role, one
 * per piece of text (or of the refusal, or of each tool call: its id and name first, then its
 * arguments in pieces), the finish reason; then (with `includeUsage`) a last chunk with `usage` and no
 * choices.
 */
export function chatCompletionChunks(
  model: string,
  answer: FakeAnswer,
  includeUsage = false,
  shape: AnswerShape = {},
  argumentPieceChars?: number,
): Record<string, unknown>[] {
  const id = `chatcmpl-${randomBytes(12).toString('hex')}`;
  const created = unixNow();
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model,
    choices,
    ...extra,
  });
  const deltas = (index: number) => {
    const choice = (delta: Record<string, unknown>, finish: string | null, logprobs: unknown = null) => ({ index, delta, logprobs, finish_reason: finish });
    const text = answer.pieces.map((piece) => choice({ content: piece }, null, shape.logprobs ? logprobsOf([piece], shape.topLogprobs ?? 0) : null));
    const refusal = answer.refusal ? argumentPieces(answer.refusal).map((piece) => choice({ refusal: piece }, null)) : [];
    const calls = answer.toolCalls.flatMap((call, i) => [
      choice({ tool_calls: [{ index: i, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }, null),
      ...argumentPieces(call.arguments, argumentPieceChars).map((piece) => choice({ tool_calls: [{ index: i, function: { arguments: piece } }] }, null)),
    ]);
    return [choice({ role: 'assistant', content: '', refusal: null }, null), ...text, ...refusal, ...calls, choice({}, finishOf(answer))];
  };
  return [
    ...Array.from({ length: shape.n ?? 1 }, (_, index) => deltas(index).map((choice) => chunk([choice]))).flat(),
    ...(includeUsage ? [chunk([], { usage: usageOf(answer) })] : []),
  ];
}

/** Streams `chat.completion.chunk`s as server-sent events, one write per chunk, then `[DONE]`. */
export async function streamChatCompletion(
  res: http.ServerResponse,
  model: string,
  answer: FakeAnswer,
  options: StreamOptions = {},
  shape: AnswerShape = {},
): Promise<void> {
  const chunks = chatCompletionChunks(model, answer, options.includeUsage, shape, options.argumentPieceChars);
  await writeEvents(res, [...chunks.map((c) => JSON.stringify(c)), '[DONE]'], options);
}

export interface ChatRequest {
  /** The body as received, for tests to assert on. */
  body: Record<string, unknown>;
  model: string | undefined;
  messages: ChatMessage[];
  stream: boolean;
  includeUsage: boolean;
  conversation: FakeConversation;
  shape: AnswerShape;
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
  toolReplyProblems(messages as ChatMessage[], invalid);
  const format = (body.response_format as { type?: unknown } | undefined)?.type;
  if (format === 'json_object' && !(messages as ChatMessage[]).some((m) => /json/i.test(textOf(m.content)))) {
    throw invalid("'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'.", 'messages', null);
  }
  if (typeof stream !== 'boolean') throw invalid(`Invalid type for 'stream': expected a boolean, but got ${typeof stream} instead.`, 'stream', 'invalid_type');
  const streamOptions = body.stream_options as { include_usage?: unknown } | null | undefined;
  if (streamOptions != null && !stream) throw invalid("The 'stream_options' parameter is only allowed when 'stream' is enabled.", 'stream_options', null);
  return {
    body,
    model: typeof body.model === 'string' ? body.model : undefined,
    messages: messages as ChatMessage[],
    stream,
    includeUsage: streamOptions?.include_usage === true,
    conversation: conversationOf(body),
    shape: shapeOf(body),
  };
}

/** As OpenAI: a `tool` message answers a call of an earlier assistant message, and every call is answered before the next turn. */
function toolReplyProblems(messages: ChatMessage[], invalid: ChatRequestError): void {
  let open = new Set<string>();
  messages.forEach((m, i) => {
    if (m.role === 'tool') {
      if (!open.delete(String(m.tool_call_id))) {
        throw invalid(
          "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
          `messages.[${i}].role`,
          null,
        );
      }
      return;
    }
    if (open.size) {
      const ids = [...open].join(', ');
      throw invalid(
        `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${ids}`,
        `messages.[${i}].role`,
        null,
      );
    }
    open = new Set(Array.isArray(m.tool_calls) ? m.tool_calls.map((c: { id?: unknown }) => String(c.id)) : []);
  });
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
  const answer = fakeReply(chat.model, chat.conversation);
  if (!chat.stream) return { status: 200, body: chatCompletion(chat.model, answer, chat.shape) };
  const stream = { delayMs: options.delayMs, onAbandoned: options.onAbandoned, includeUsage: chat.includeUsage };
  await streamChatCompletion(res, chat.model, answer, stream, chat.shape);
}
