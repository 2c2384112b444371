/**
 * POST …/chat/completions in OpenAI's wire format, for providers whose inference API speaks it
 * (OpenAI, Azure OpenAI, Fireworks AI, Together AI): the caller's body out with the provider's model,
 * a ChatAnswer back. A streamed answer is
 * read as server-sent events and each chunk is yielded as it arrives; the caller's abort signal ends
 * the provider call, and so does a consumer that stops reading.
 */
import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { z } from 'zod';
import { GatewayError } from '../../errors';
import { parseAnswer } from '../answer';
import { apiUrl, type ApiEndpoint } from '../api';
import { providerDownload, providerFetch } from '../http';
import { redactText } from '../redact';
import type { ChatAnswer, ChatChoice, ChatChunk, ChatCompletion, ChatLogprobs, ChatRequest, ChatUsage, FinishReason } from '../types';

const count = z.number().int().nonnegative();
const wireUsage = z.object({
  prompt_tokens: count.optional(),
  completion_tokens: count.optional(),
  total_tokens: count.optional(),
  prompt_tokens_details: z.record(count.nullish()).nullish(),
  completion_tokens_details: z.record(count.nullish()).nullish(),
});

const wireTopLogprob = z.object({ token: z.string(), logprob: z.number(), bytes: z.array(z.number()).nullish() });
const wireTokenLogprob = wireTopLogprob.extend({ top_logprobs: z.array(wireTopLogprob).nullish() });
const wireLogprobs = z.object({ content: z.array(wireTokenLogprob).nullish(), refusal: z.array(wireTokenLogprob).nullish() });

const wireToolCall = z.object({
  index: z.number().int().nonnegative().optional(),
  id: z.string().nullish(),
  function: z.object({ name: z.string().nullish(), arguments: z.string().nullish() }).optional(),
});

const wireMessage = z.object({ content: z.string().nullish(), refusal: z.string().nullish(), tool_calls: z.array(wireToolCall).nullish() });

const wireChoice = z.object({
  index: z.number().int().nonnegative().optional(),
  message: wireMessage.optional(),
  delta: wireMessage.optional(),
  finish_reason: z.string().nullish(),
  logprobs: wireLogprobs.nullish(),
});

/** A `chat.completion`, or one `chat.completion.chunk` of a stream (only the fields read; others pass). */
const wireCompletion = z.object({
  id: z.string().optional(),
  model: z.string().optional(),
  created: z.number().optional(),
  choices: z.array(wireChoice).optional(),
  usage: wireUsage.nullish(),
  service_tier: z.string().nullish(),
  system_fingerprint: z.string().nullish(),
  /** Some providers report a failure inside an open stream. */
  error: z.union([z.string(), z.object({ message: z.string().optional() })]).optional(),
});

type WireCompletion = z.infer<typeof wireCompletion>;
type WireUsage = z.infer<typeof wireUsage>;
type WireChoice = z.infer<typeof wireChoice>;
type WireLogprobs = z.infer<typeof wireLogprobs>;

/** Bounds the bytes buffered while waiting for the end of one event. */
const MAX_EVENT_BYTES = 1024 * 1024;

/** How a provider's body differs from OpenAI's request (`max_completion_tokens` spelled `max_tokens`, say). */
export type WireBody = (body: Record<string, unknown>) => Record<string, unknown>;

/**
 * POST `path` (below the endpoint's API root, e.g. `/chat/completions`) in OpenAI's chat format: the
 * caller's body with `model` replaced (reshaped by `wire` where the provider needs it).
 */
export async function chatCompletions(endpoint: ApiEndpoint, path: string, request: ChatRequest, wire: WireBody = (body) => body): Promise<ChatAnswer> {
  const stream = request.body.stream ?? false;
  const call = {
    provider: endpoint.title,
    method: 'POST' as const,
    url: apiUrl(endpoint, path),
    json: wire(chatBody(request)),
    redact: endpoint.secrets,
    policy: endpoint.http,
    signal: request.signal,
  };
  if (!stream) {
    const answer = await providerFetch({ ...call, headers: { ...endpoint.headers }, answer: wireCompletion });
    return { stream: false, completion: toCompletion(answer, request.model) };
  }
  const content = await providerDownload({ ...call, headers: { ...endpoint.headers, accept: 'text/event-stream' } });
  const events = wireChunks(content.stream, endpoint);
  // The answer's id, model and time come with its first chunk: read it before answering.
  const first = await events.next();
  if (first.done) throw new GatewayError('provider', `${endpoint.title} ended the stream before its first chunk`, { status: 502 });
  const head = first.value;
  // `||`: Azure opens its streams with a chunk whose id and model are empty (its prompt filter results).
  const id = head.id || `chatcmpl-${randomUUID()}`;
  return { stream: true, id, model: head.model || request.model, created: head.created || nowSeconds(), chunks: toChunks(head, events) };
}

/** For providers that take OpenAI's older `max_tokens` only: `max_completion_tokens` sent under that name. */
export const maxTokensOnly: WireBody = ({ max_completion_tokens: maxCompletionTokens, ...body }) =>
  maxCompletionTokens == null ? body : { ...body, max_tokens: maxCompletionTokens };

/** The caller's body with the provider's model; a stream always asks for usage, so the gateway can report it. */
function chatBody({ body, model }: ChatRequest): Record<string, unknown> {
  const out: Record<string, unknown> = { ...body, model };
  if (body.stream) out.stream_options = { ...body.stream_options, include_usage: true };
  return out;
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

function toCompletion(answer: WireCompletion, model: string): ChatCompletion {
  return {
    id: answer.id ?? '',
    model: answer.model ?? model,
    created: answer.created ?? nowSeconds(),
    choices: (answer.choices ?? []).map(toChoice),
    usage: toUsage(answer.usage),
    ...(answer.service_tier ? { serviceTier: answer.service_tier } : {}),
    ...(answer.system_fingerprint ? { systemFingerprint: answer.system_fingerprint } : {}),
  };
}

function toChoice(choice: WireChoice, position: number): ChatChoice {
  const message = choice.message ?? {};
  return {
    index: choice.index ?? position,
    content: message.content ?? null,
    refusal: message.refusal ?? null,
    toolCalls: (message.tool_calls ?? []).map((call) => ({ id: call.id ?? '', name: call.function?.name ?? '', arguments: call.function?.arguments ?? '' })),
    finishReason: toFinishReason(choice.finish_reason),
    logprobs: toLogprobs(choice.logprobs),
  };
}

function toLogprobs(logprobs: WireLogprobs | null | undefined): ChatLogprobs | null {
  if (!logprobs) return null;
  const tokens = (list: z.infer<typeof wireTokenLogprob>[] | null | undefined) =>
    list
      ? list.map((t) => ({
          token: t.token,
          logprob: t.logprob,
          bytes: t.bytes ?? null,
          topLogprobs: (t.top_logprobs ?? []).map((top) => ({ token: top.token, logprob: top.logprob, bytes: top.bytes ?? null })),
        }))
      : null;
  return { content: tokens(logprobs.content), refusal: tokens(logprobs.refusal) };
}

const FINISH_REASONS: Readonly<Record<string, FinishReason>> = {
  stop: 'stop',
  eos: 'stop',
  length: 'length',
  content_filter: 'content_filter',
  tool_calls: 'tool_calls',
  function_call: 'tool_calls',
};

const toFinishReason = (reason: string | null | undefined): FinishReason | null => (reason ? (FINISH_REASONS[reason] ?? 'stop') : null);

/** Counts only: a detail the provider reports as null is left out. */
const counts = (details: Record<string, number | null | undefined> | null | undefined) =>
  details ? Object.fromEntries(Object.entries(details).filter((e): e is [string, number] => typeof e[1] === 'number')) : undefined;

function toUsage(usage: WireUsage | null | undefined): ChatUsage | null {
  if (!usage) return null;
  const promptTokens = usage.prompt_tokens ?? 0;
  const completionTokens = usage.completion_tokens ?? 0;
  const promptTokensDetails = counts(usage.prompt_tokens_details);
  const completionTokensDetails = counts(usage.completion_tokens_details);
  return {
    promptTokens,
    completionTokens,
    totalTokens: usage.total_tokens ?? promptTokens + completionTokens,
    ...(promptTokensDetails ? { promptTokensDetails } : {}),
    ...(completionTokensDetails ? { completionTokensDetails } : {}),
  };
}

/** One streamed choice's pieces: its delta (text, refusal, tool-call pieces, log probabilities), then its finish reason. */
function* choiceChunks(choice: WireChoice, position: number): Generator<ChatChunk> {
  const index = choice.index ?? position;
  const delta = choice.delta ?? {};
  const toolCalls = (delta.tool_calls ?? []).map((call, i) => ({
    index: call.index ?? i,
    ...(call.id ? { id: call.id } : {}),
    ...(call.function?.name ? { name: call.function.name } : {}),
    ...(call.function?.arguments ? { arguments: call.function.arguments } : {}),
  }));
  const logprobs = toLogprobs(choice.logprobs);
  if (delta.content || delta.refusal || toolCalls.length || logprobs) {
    yield {
      type: 'delta',
      index,
      ...(delta.content ? { content: delta.content } : {}),
      ...(delta.refusal ? { refusal: delta.refusal } : {}),
      ...(toolCalls.length ? { toolCalls } : {}),
      ...(logprobs ? { logprobs } : {}),
    };
  }
  const finishReason = toFinishReason(choice.finish_reason);
  if (finishReason) yield { type: 'finish', index, finishReason };
}

/** The stream's chunks as the contract's: each choice's deltas and finish reason, then the usage when the provider sent one. */
async function* toChunks(head: WireCompletion, rest: AsyncIterator<WireCompletion>): AsyncGenerator<ChatChunk> {
  let usage: ChatUsage | null = null;
  try {
    for (let next: IteratorResult<WireCompletion> = { done: false, value: head }; !next.done; next = await rest.next()) {
      for (const [position, choice] of (next.value.choices ?? []).entries()) yield* choiceChunks(choice, position);
      usage = toUsage(next.value.usage) ?? usage;
    }
  } finally {
    // A consumer that stops early closes the provider connection instead of leaving it to finish.
    await rest.return?.(undefined);
  }
  if (usage) yield { type: 'usage', usage };
}

/**
 * The JSON chunks of a server-sent event stream, up to `[DONE]`. The body is still read to its end
 * (providers close it right after `[DONE]`): a body left unread would cost the keep-alive connection,
 * and opening a new one is most of what a short streamed call takes.
 */
async function* wireChunks(stream: Readable, { title, secrets }: ApiEndpoint): AsyncGenerator<WireCompletion> {
  let done = false;
  for await (const data of eventData(stream, title)) {
    if (done) continue;
    if (data === '[DONE]') {
      done = true;
      continue;
    }
    let value: unknown;
    try {
      value = JSON.parse(data);
    } catch {
      throw new GatewayError('provider', `${title} sent a stream chunk that is not JSON`, { status: 502 });
    }
    const chunk = parseAnswer(wireCompletion, value, title, 'stream chunk');
    if (chunk.error) {
      const message = typeof chunk.error === 'string' ? chunk.error : (chunk.error.message ?? 'unknown error');
      throw new GatewayError('provider', `${title} failed while streaming: ${redactText(message, secrets)}`, { status: 502 });
    }
    yield chunk;
  }
}

/** The `data` of each server-sent event (its `data:` lines joined), as events complete. */
async function* eventData(stream: Readable, title: string): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const bytes of stream as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(bytes, { stream: true });
    let boundary: RegExpExecArray | null;
    while ((boundary = /\r?\n\r?\n/.exec(buffer))) {
      const data = dataOf(buffer.slice(0, boundary.index));
      buffer = buffer.slice(boundary.index + boundary[0].length);
      if (data !== null) yield data;
    }
    if (buffer.length > MAX_EVENT_BYTES) throw new GatewayError('provider', `${title} sent a stream event over ${MAX_EVENT_BYTES} bytes`, { status: 502 });
  }
  const last = dataOf(buffer + decoder.decode());
  if (last !== null) yield last;
}

/** An event's data, or null for an event without any (comments, keep-alives). */
function dataOf(event: string): string | null {
  const lines = event.split(/\r?\n/).filter((line) => line.startsWith('data:'));
  return lines.length ? lines.map((line) => line.slice(5).replace(/^ /, '')).join('\n') : null;
}
