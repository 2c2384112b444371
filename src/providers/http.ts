/**
 * `providerFetch`: the one way adapters talk HTTP to providers. It owns the cross-cutting rules so no
 * adapter re-implements them: a per-request timeout, bounded retries for idempotent calls only (a
 * retried POST could create a second job), `Retry-After` honoured, and every failure mapped to a
 * `GatewayError` of kind 'provider' carrying the provider's status, message and code. The credentials
 * of the call are scrubbed out of what the gateway reads from an answer (redact.ts): the error
 * message, and every string of a JSON answer; a streamed body (file content) is passed on as it is.
 * A JSON answer is read through the request's schema when it gives one (answer.ts): an answer the
 * gateway cannot use is a 502 `provider_bad_answer` naming the field, never retried.
 *
 * Calls go through undici's `request`, not `fetch`: the same connection pool without the WHATWG
 * Request/Response and web-stream layers, which cost about three times the CPU per call (measured:
 * ≈ 0.11–0.14 ms a call against ≈ 0.03 ms), a large part of what client mode adds to a request.
 * Redirects are not followed: a provider's API answers where it is asked, and a redirect must not
 * steer the gateway (with the caller's credentials) to another host.
 */
import { STATUS_CODES } from 'node:http';
import { Readable } from 'node:stream';
import type * as Undici from 'undici';
import { errnoCode, GatewayError, PROVIDER_UNREACHABLE, providerCode } from '../errors';
import { lazyRequire } from '../lazy';
import { parseAnswer, type AnswerSchema } from './answer';
import { redactJson, redactText } from './redact';
import type { ProviderContent } from './types';

export interface HttpPolicy {
  /** Per-attempt timeout for ordinary calls. */
  timeoutMs?: number;
  /** Per-attempt timeout for calls that stream a large body (uploads). */
  uploadTimeoutMs?: number;
  /** Extra attempts after the first, for idempotent calls. */
  retries?: number;
  /** First back-off step; doubles per attempt. Tests set it near zero. */
  baseDelayMs?: number;
  /** Ceiling on any single wait, including one a provider asks for with `Retry-After`. */
  maxRetryWaitMs?: number;
}

export const DEFAULT_HTTP_POLICY: Required<HttpPolicy> = {
  timeoutMs: 60_000,
  uploadTimeoutMs: 15 * 60_000,
  retries: 2,
  baseDelayMs: 250,
  maxRetryWaitMs: 10_000,
};

export interface ProviderRequest<T = unknown> {
  /** Names the provider in error messages. */
  provider: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string;
  headers?: Record<string, string>;
  /** A JSON body; serialised here, so it can be replayed on retry. */
  json?: unknown;
  /** A raw body. A stream can be sent only once, so a request with one is never retried. */
  body?: string | Buffer | Readable;
  /** Marks a non-GET call safe to repeat (e.g. a cancel). GETs are always idempotent. */
  idempotent?: boolean;
  /** Use the upload timeout instead of the ordinary one. */
  upload?: boolean;
  /** Values (credentials) that must never appear in an error message or a JSON answer. */
  redact?: readonly string[];
  policy?: HttpPolicy;
  /** Ends the call when aborted (the caller went away), besides the time-out. Never retried then. */
  signal?: AbortSignal;
  /** The JSON answer's shape: what the gateway reads of it, checked (answer.ts). */
  answer?: AnswerSchema<T>;
}

/**
 * Sent with every provider call (a caller's own `user-agent` wins): `fetch` sent one, undici's `request`
 * sends none, and the bot filters in front of some provider APIs refuse requests without one.
 */
const USER_AGENT = 'model-gateway';

/** undici, required on the first provider call: loading it takes a noticeable part of a start. */
const undici = lazyRequire<typeof Undici>(require, 'undici');
const request = (...args: Parameters<typeof Undici.request>): ReturnType<typeof Undici.request> => undici().request(...args);

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Sends the request and returns the parsed JSON body (`undefined` when empty). */
export async function providerFetch<T = unknown>(req: ProviderRequest<T>): Promise<T> {
  const policy = { ...DEFAULT_HTTP_POLICY, ...req.policy };
  const retryable = (req.idempotent ?? req.method === 'GET') && !(req.body instanceof Readable);
  const maxAttempts = retryable ? policy.retries + 1 : 1;

  for (let attempt = 1; ; attempt++) {
    const outcome = await attemptOnce(req, policy);
    if (outcome.ok) return outcome.value as T;
    if (attempt >= maxAttempts || !outcome.retry) throw outcome.error;
    const backoff = policy.baseDelayMs * 2 ** (attempt - 1);
    await sleep(Math.min(outcome.retryAfterMs ?? backoff, policy.maxRetryWaitMs));
  }
}

/**
 * A call whose answer body is streamed back to the caller (file content, a streamed chat completion):
 * the time-out covers the wait for the answer's headers only; destroying the returned stream, or the
 * caller's `signal`, closes the provider connection. A JSON body may be sent (a chat request).
 */
export async function providerDownload(req: Omit<ProviderRequest, 'body' | 'idempotent' | 'upload' | 'answer'>): Promise<ProviderContent> {
  const policy = { ...DEFAULT_HTTP_POLICY, ...req.policy };
  const time = deadline(policy.timeoutMs, req.signal);
  const { headers, body } = outgoing(req);
  let response: Awaited<ReturnType<typeof request>>;
  try {
    response = await request(req.url, { method: req.method, headers, body, signal: time.signal });
  } catch (err) {
    throw transportFailure(req, err).error;
  } finally {
    // The headers are in: the body streams on for as long as it takes, until the caller goes away.
    time.stopClock();
  }
  if (response.statusCode < 200 || response.statusCode >= 300) {
    const text = await response.body.text().catch(() => '');
    throw httpError(req, response.statusCode, text);
  }
  const length = header(response.headers, 'content-length');
  return {
    // Destroying it (the caller went away) aborts the call and frees the connection.
    stream: response.body,
    bytes: length !== undefined && /^\d+$/.test(length) ? Number(length) : null,
    contentType: header(response.headers, 'content-type') ?? null,
  };
}

/** One header of an answer (undici gives repeated ones as an array: the first counts). */
function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** A call's headers (ours first: a caller's own win) and body (a JSON one serialised). */
function outgoing(req: Pick<ProviderRequest, 'headers' | 'json' | 'body'>, defaults: Record<string, string> = {}) {
  const headers: Record<string, string> = { 'user-agent': USER_AGENT, ...defaults, ...req.headers };
  if (req.json === undefined) return { headers, body: req.body };
  headers['content-type'] = 'application/json';
  return { headers, body: JSON.stringify(req.json) };
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: GatewayError; retry: boolean; retryAfterMs?: number };

/**
 * An attempt's time-out, also aborted when the caller's signal is: one controller and one timer,
 * cleared as soon as the attempt ends. `AbortSignal.timeout` (and `AbortSignal.any` to add the caller)
 * cost a good part more per call, and their timers stay until they fire, long after the call.
 */
function deadline(ms: number, caller: AbortSignal | undefined): { signal: AbortSignal; stopClock(): void; clear(): void } {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DOMException('timed out', 'TimeoutError')), ms);
  const callerGone = () => controller.abort(caller?.reason);
  if (caller?.aborted) callerGone();
  else caller?.addEventListener('abort', callerGone, { once: true });
  return {
    signal: controller.signal,
    /** Stops the clock; the caller going away still aborts the call. */
    stopClock: () => clearTimeout(timer),
    /** Stops the clock and lets go of the caller's signal: the exchange is over. */
    clear() {
      clearTimeout(timer);
      caller?.removeEventListener('abort', callerGone);
    },
  };
}

async function attemptOnce<T>(req: ProviderRequest<T>, policy: Required<HttpPolicy>): Promise<Outcome> {
  const { headers, body } = outgoing(req, { accept: 'application/json' });
  const time = deadline(req.upload ? policy.uploadTimeoutMs : policy.timeoutMs, req.signal);

  // The body is read inside the same try: the timeout covers the whole exchange, not just headers.
  let status: number;
  let text: string;
  let response: Awaited<ReturnType<typeof request>>;
  try {
    response = await request(req.url, { method: req.method, headers, body, signal: time.signal });
    status = response.statusCode;
    text = await response.body.text();
  } catch (err) {
    return transportFailure(req, err);
  } finally {
    time.clear();
  }

  if (status >= 200 && status < 300) return answerOf(req, text);

  const retryAfterMs = parseRetryAfter(header(response.headers, 'retry-after') ?? null);
  // A 429's wait travels with the error: a caller that retries later (the batch runner) honours it.
  const error = httpError(req, status, text, status === 429 ? retryAfterMs : undefined);
  const retry = status === 429 || status >= 500;
  return { ok: false, error, retry, retryAfterMs };
}

/** A 2xx answer's JSON (`undefined` when empty), scrubbed of the call's credentials and read through its schema. */
function answerOf<T>(req: ProviderRequest<T>, text: string): Outcome {
  let value: unknown;
  try {
    value = text === '' ? undefined : redactJson(text, JSON.parse(text), req.redact);
  } catch {
    const error = new GatewayError('provider', `${req.provider} returned an invalid JSON response`, { status: 502 });
    return { ok: false, error, retry: false };
  }
  if (!req.answer) return { ok: true, value };
  try {
    return { ok: true, value: parseAnswer(req.answer, value, req.provider) };
  } catch (err) {
    return { ok: false, error: err as GatewayError, retry: false };
  }
}

function transportFailure(req: Pick<ProviderRequest, 'provider' | 'signal'>, err: unknown): { ok: false; error: GatewayError; retry: boolean } {
  if (req.signal?.aborted) {
    // The caller went away: nobody waits for an answer, so nothing is retried and no time-out is reported.
    const error = new GatewayError('invalid_request', `The call to ${req.provider} was abandoned: the request was cancelled`, { code: 'request_cancelled' });
    return { ok: false, error, retry: false };
  }
  // By shape: a time-out's DOMException and undici's errors are told apart by name, not class.
  const name = typeof err === 'object' && err !== null && 'name' in err ? err.name : undefined;
  if (name === 'TimeoutError' || name === 'AbortError') {
    // Not retried: the attempt already used its whole time budget; the caller (or monitor) retries later.
    const error = new GatewayError('provider', `${req.provider} did not answer in time`, { status: 504 });
    return { ok: false, error, retry: false };
  }
  // Only an error code, never the cause's message: it may embed the URL or request details.
  const cause = typeof err === 'object' && err !== null && 'cause' in err ? err.cause : undefined;
  const nested: unknown = typeof cause === 'object' && cause !== null && 'errors' in cause && Array.isArray(cause.errors) ? cause.errors[0] : undefined;
  const code = errnoCode(err) ?? errnoCode(cause) ?? errnoCode(nested);
  const message = `Could not reach ${req.provider}${code ? ` (${code})` : ''}`;
  return { ok: false, error: new GatewayError('provider', message, { status: 502, code: PROVIDER_UNREACHABLE, cause: err }), retry: true };
}

/** Maps a non-2xx answer, reading the common error body shapes: OpenAI's, Google's, OAuth 2's, and bare strings. */
function httpError(req: Pick<ProviderRequest, 'provider' | 'redact'>, status: number, text: string, retryAfterMs?: number): GatewayError {
  let message = STATUS_CODES[status] ?? `HTTP ${status}`;
  let code: string | null = null;
  let param: string | null = null;
  const parsed = jsonObject(text);
  const inner = parsed?.error;
  const description = parsed?.error_description;
  if (typeof inner === 'string' && typeof description === 'string') {
    // OAuth 2 (RFC 6749 §5.2): `error` is the code, `error_description` says why.
    message = description || inner;
    code = inner;
  } else if (typeof inner === 'string') message = inner;
  else if (isRecord(inner)) {
    if (typeof inner.message === 'string' && inner.message) message = inner.message;
    if (typeof inner.code === 'string') code = inner.code;
    else if (typeof inner.status === 'string') code = inner.status;
    if (typeof inner.param === 'string') param = inner.param;
  } else if (typeof parsed?.message === 'string') message = parsed.message;
  // Not JSON (an HTML error page, a proxy's text): the status text is all we can trust.
  // api.md §6.2: the message names the provider and carries its own; the provider's status for its 4xx; a provider's
  // own failure (5xx) is a bad gateway here, and so is an answer the gateway cannot use (a redirect, which it does
  // not follow, or a 1xx).
  const place = { code: code ? providerCode(redactText(code, req.redact)) : null, param: param && redactText(param, req.redact) };
  return new GatewayError('provider', `${req.provider}: ${redactText(message, req.redact)}`, {
    status: status >= 400 && status < 500 ? status : 502,
    ...place,
    ...(retryAfterMs === undefined ? {} : { retryAfterSeconds: Math.ceil(retryAfterMs / 1000) }),
  });
}

/** `Retry-After` is either delta-seconds or an HTTP date; anything else is ignored. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The text as a JSON object, or null when it is not one. */
function jsonObject(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text);
    return isRecord(value) ? value : null;
  } catch {
    return null;
  }
}
