/**
 * POST …/chat/completions in OpenAI's wire format, for providers whose inference API speaks it
 * (OpenAI, Azure OpenAI, Fireworks AI, Together AI): the caller's body out with the provider's model,
 * a ChatAnswer back. A streamed answer is relayed (relay.ts): the provider's events go on as each
 * read brings them; the caller's abort signal ends the provider call, and so does a consumer that
 * stops reading.
 */
import { randomUUID } from 'node:crypto';
import { GatewayError } from '../../errors';
import { apiUrl, type ApiEndpoint } from '../api';
import { providerDownload, providerFetch } from '../http';
import type { ChatAnswer, ChatChoice, ChatChunk, ChatCompletion, ChatLogprobs, ChatRequest, ProviderContent } from '../types';
import { toFinishReason, toUsage, wireCompletion, type WireChoice, type WireCompletion, type WireLogprobs, type WireTokenLogprob } from './chat-wire';
import { WireRelay } from './relay';

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
  return relayedAnswer(content, endpoint, request);
}

/**
 * The stream as an answer. Its id and time come with its first chunk that has choices: the events up
 * to it are read before answering, so a provider that fails or ends before it is the answer's status.
 */
async function relayedAnswer(content: ProviderContent, endpoint: ApiEndpoint, request: ChatRequest): Promise<ChatAnswer> {
  const relay = new WireRelay(endpoint, request.body.model, request.body.stream_options?.include_usage ?? false);
  const reads = (content.stream as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  let first = '';
  try {
    while (!relay.head) {
      const next = await reads.next();
      if (next.done) {
        first += relay.end();
        break;
      }
      first += relay.read(next.value);
    }
  } catch (err) {
    await reads.return?.();
    throw err;
  }
  if (!relay.opened) throw new GatewayError('provider', `${endpoint.title} ended the stream before its first chunk`, { status: 502 });
  const { id, created } = relay.head ?? { id: `chatcmpl-${randomUUID()}`, created: Math.floor(Date.now() / 1000) };
  return { stream: true, relayed: true, id, model: request.model, created, chunks: relayed(first, reads, relay) };
}

/**
 * The caller's events, one piece per read of the provider's body (its events of that read in one
 * string), then the usage. The body is read to its end after `[DONE]` (providers close it right
 * after): a body left unread would cost the keep-alive connection.
 */
async function* relayed(first: string, reads: AsyncIterator<Buffer>, relay: WireRelay): AsyncGenerator<ChatChunk> {
  try {
    if (first) yield { type: 'events', text: first, finishReason: relay.finishReason };
    relay.rethrow();
    for (let next = await reads.next(); !next.done; next = await reads.next()) {
      const text = relay.read(next.value);
      if (text) yield { type: 'events', text, finishReason: relay.finishReason };
      relay.rethrow();
    }
    const rest = relay.end();
    if (rest) yield { type: 'events', text: rest, finishReason: relay.finishReason };
  } finally {
    // A consumer that stops early closes the provider connection instead of leaving it to finish.
    await reads.return?.();
  }
  if (relay.usage) yield { type: 'usage', usage: relay.usage };
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
  const tokens = (list: WireTokenLogprob[] | null | undefined) =>
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
