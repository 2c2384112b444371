/**
 * POST …/chat/completions in OpenAI's wire format, for providers whose inference API speaks it
 * (Fireworks AI, Together AI): the internal ChatRequest out, a ChatAnswer back. A streamed answer is
 * read as server-sent events and each chunk is yielded as it arrives; the caller's abort signal ends
 * the provider call, and so does a consumer that stops reading.
 */
import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { z } from 'zod';
import { GatewayError } from '../../errors';
import { apiUrl, type ApiEndpoint } from '../api';
import { providerDownload, providerFetch } from '../http';
import { redactText } from '../redact';
import type { ChatAnswer, ChatChunk, ChatCompletion, ChatRequest, ChatUsage, FinishReason } from '../types';

const wireUsage = z.object({ prompt_tokens: z.number().optional(), completion_tokens: z.number().optional(), total_tokens: z.number().optional() });

const wireChoice = z.object({
  message: z.object({ content: z.string().nullish() }).optional(),
  delta: z.object({ content: z.string().nullish() }).optional(),
  finish_reason: z.string().nullish(),
});

/** A `chat.completion`, or one `chat.completion.chunk` of a stream (only the fields read; others pass). */
const wireCompletion = z.object({
  id: z.string().optional(),
  model: z.string().optional(),
  created: z.number().optional(),
  choices: z.array(wireChoice).optional(),
  usage: wireUsage.nullish(),
  /** Some providers report a failure inside an open stream. */
  error: z.union([z.string(), z.object({ message: z.string().optional() })]).optional(),
});

type WireCompletion = z.infer<typeof wireCompletion>;
type WireUsage = z.infer<typeof wireUsage>;

/** The provider's answer in the shape read here, or a 502 naming the provider. */
function parseCompletion(value: unknown, title: string): WireCompletion {
  const parsed = wireCompletion.safeParse(value);
  if (!parsed.success) throw new GatewayError('provider', `${title} sent a chat answer the gateway cannot read`, { status: 502 });
  return parsed.data;
}

/** Bounds the bytes buffered while waiting for the end of one event. */
const MAX_EVENT_BYTES = 1024 * 1024;

/** POST `path` (below the endpoint's API root, e.g. `/chat/completions`) in OpenAI's chat format. */
export async function chatCompletions(endpoint: ApiEndpoint, path: string, request: ChatRequest): Promise<ChatAnswer> {
  const call = {
    provider: endpoint.title,
    method: 'POST' as const,
    url: apiUrl(endpoint, path),
    json: chatBody(request),
    redact: endpoint.secrets,
    policy: endpoint.http,
    signal: request.signal,
  };
  if (!request.stream) {
    const answer = parseCompletion(await providerFetch<unknown>({ ...call, headers: { ...endpoint.headers } }), endpoint.title);
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

function chatBody(request: ChatRequest): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: request.model,
    messages: request.messages.map(({ role, content, name }) => (name === undefined ? { role, content } : { role, content, name })),
    stream: request.stream,
    // Usage comes only when asked for: always ask, so a streamed answer can report it.
    stream_options: request.stream ? { include_usage: true } : undefined,
    max_tokens: request.maxTokens,
    temperature: request.temperature,
    top_p: request.topP,
    stop: request.stop,
    seed: request.seed,
  };
  return Object.fromEntries(Object.entries(body).filter(([, value]) => value !== undefined));
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

function toCompletion(answer: WireCompletion, model: string): ChatCompletion {
  const choice = answer.choices?.[0];
  return {
    id: answer.id ?? '',
    model: answer.model ?? model,
    created: answer.created ?? nowSeconds(),
    content: choice?.message?.content ?? '',
    finishReason: toFinishReason(choice?.finish_reason),
    usage: toUsage(answer.usage),
  };
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

function toUsage(usage: WireUsage | null | undefined): ChatUsage | null {
  if (!usage) return null;
  const promptTokens = usage.prompt_tokens ?? 0;
  const completionTokens = usage.completion_tokens ?? 0;
  return { promptTokens, completionTokens, totalTokens: usage.total_tokens ?? promptTokens + completionTokens };
}

/** The stream's chunks as the contract's: text deltas, the finish reason, then the usage when the provider sent one. */
async function* toChunks(head: WireCompletion, rest: AsyncIterator<WireCompletion>): AsyncGenerator<ChatChunk> {
  let usage: ChatUsage | null = null;
  try {
    for (let next: IteratorResult<WireCompletion> = { done: false, value: head }; !next.done; next = await rest.next()) {
      const choice = next.value.choices?.[0];
      if (choice?.delta?.content) yield { type: 'delta', content: choice.delta.content };
      const finishReason = toFinishReason(choice?.finish_reason);
      if (finishReason) yield { type: 'finish', finishReason };
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
    let chunk: WireCompletion;
    try {
      chunk = parseCompletion(JSON.parse(data), title);
    } catch {
      throw new GatewayError('provider', `${title} sent a stream chunk that is not JSON`, { status: 502 });
    }
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
