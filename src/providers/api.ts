/**
 * The REST plumbing the HTTP-API providers share (OpenAI-compatible, Fireworks AI, Together AI): an
 * endpoint (API root, auth headers, fixed query, credentials to redact, HTTP policy) and requests below
 * it handed to providerFetch / providerDownload. Each provider's connection is such an endpoint, so
 * its operations only name a path, a body and the schema of the answer they read (`answer`).
 */
import type { Readable } from 'node:stream';
import type { AnswerSchema } from './answer';
import { providerDownload, providerFetch, type HttpPolicy } from './http';
import type { ProviderContent } from './types';
import { providerUrl } from './url';

export interface ApiEndpoint {
  /** Names the provider in error messages. */
  title: string;
  /** The API root, e.g. `https://api.openai.com/v1`. */
  baseUrl: string;
  /** Auth and scoping headers (`authorization`, `api-key`, `openai-project`, …). */
  headers: Readonly<Record<string, string>>;
  /** Query parameters every call carries (Azure's `api-version`). */
  query?: Readonly<Record<string, string>>;
  /** Credential values that must never appear in an error message. */
  secrets: readonly string[];
  http: HttpPolicy;
}

export interface ApiRequest<T = unknown> {
  method: 'GET' | 'POST' | 'DELETE';
  /** Below the API root, e.g. `/fine_tuning/jobs`; ids in it made with `urlPath` (see url.ts). */
  path: string;
  query?: Record<string, string | number | undefined>;
  json?: unknown;
  body?: Readable;
  headers?: Record<string, string>;
  idempotent?: boolean;
  upload?: boolean;
  /** The answer's shape (each provider's `schemas.ts`): a field missing or mistyped is a 502 naming it. */
  answer?: AnswerSchema<T>;
}

/** The URL of `path` below the endpoint's root, with the request's and the endpoint's query parameters. */
export const apiUrl = (endpoint: ApiEndpoint, path: string, query: ApiRequest['query'] = {}): string =>
  providerUrl(endpoint.baseUrl, path, { ...query, ...endpoint.query });

export function apiRequest<T = unknown>(endpoint: ApiEndpoint, req: ApiRequest<T>): Promise<T> {
  return providerFetch<T>({
    provider: endpoint.title,
    method: req.method,
    url: apiUrl(endpoint, req.path, req.query),
    headers: { ...endpoint.headers, ...req.headers },
    json: req.json,
    body: req.body,
    idempotent: req.idempotent,
    upload: req.upload,
    redact: endpoint.secrets,
    policy: endpoint.http,
    answer: req.answer,
  });
}

/** A GET whose answer is streamed back (file content), never buffered. */
export function apiDownload(endpoint: ApiEndpoint, path: string): Promise<ProviderContent> {
  return providerDownload({
    provider: endpoint.title,
    method: 'GET',
    url: apiUrl(endpoint, path),
    headers: { ...endpoint.headers },
    redact: endpoint.secrets,
    policy: endpoint.http,
  });
}
