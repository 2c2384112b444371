/**
 * What every operation of an OpenAI-compatible API shares (OpenAI itself, Azure OpenAI): the base
 * URL, the auth headers and fixed query (Azure's `api-version`), and the hand-off to providerFetch.
 * Each provider's module builds this connection from its settings; the operations never see which
 * provider they talk to.
 */
import type { Readable } from 'node:stream';
import { providerDownload, providerFetch, type HttpPolicy } from '../http';
import type { ChatAnswer, ChatRequest, PageInput, ProviderContent } from '../types';
import { chatCompletions } from './chat';

export interface OpenAICompatibleConnection {
  /** Names the provider in error messages. */
  title: string;
  /** The API root, e.g. `https://api.openai.com/v1` or `https://<resource>.openai.azure.com/openai`. */
  baseUrl: string;
  /** Auth and scoping headers (`authorization`, `api-key`, `openai-project`, …). */
  headers: Readonly<Record<string, string>>;
  /** Query parameters every call carries (Azure's `api-version`). */
  query: Readonly<Record<string, string>>;
  /** Credential values that must never appear in an error message. */
  secrets: readonly string[];
  http: HttpPolicy;
  /** Azure's 2024-10-21 API has no `method` on create: hyperparameters go top-level. */
  methodOnCreate: boolean;
  /** Whether create takes `metadata` (the gateway job id travels there, see findJob). */
  metadataOnCreate: boolean;
}

export interface CompatibleRequest {
  method: 'GET' | 'POST' | 'DELETE';
  /** Below the base URL, e.g. `/fine_tuning/jobs`. */
  path: string;
  query?: Record<string, string | number | undefined>;
  json?: unknown;
  body?: Readable;
  headers?: Record<string, string>;
  idempotent?: boolean;
  upload?: boolean;
}

function compatibleUrl(conn: OpenAICompatibleConnection, req: CompatibleRequest): string {
  const url = new URL(conn.baseUrl.replace(/\/+$/, '') + req.path);
  for (const [key, value] of Object.entries({ ...req.query, ...conn.query })) {
    if (value !== undefined) url.searchParams.set(key, String(value));
  }
  return url.toString();
}

export function compatibleRequest<T>(conn: OpenAICompatibleConnection, req: CompatibleRequest): Promise<T> {
  return providerFetch<T>({
    provider: conn.title,
    method: req.method,
    url: compatibleUrl(conn, req),
    headers: { ...conn.headers, ...req.headers },
    json: req.json,
    body: req.body,
    idempotent: req.idempotent,
    upload: req.upload,
    redact: conn.secrets,
    policy: conn.http,
  });
}

/** A GET whose answer is streamed back (file content), never buffered. */
export function compatibleDownload(conn: OpenAICompatibleConnection, path: string): Promise<ProviderContent> {
  return providerDownload({
    provider: conn.title,
    method: 'GET',
    url: compatibleUrl(conn, { method: 'GET', path }),
    headers: { ...conn.headers },
    redact: conn.secrets,
    policy: conn.http,
  });
}

/** POST `path` (below the base URL) as an OpenAI chat completions call. */
export function compatibleChat(conn: OpenAICompatibleConnection, path: string, request: ChatRequest): Promise<ChatAnswer> {
  const url = compatibleUrl(conn, { method: 'POST', path });
  return chatCompletions({ title: conn.title, url, headers: conn.headers, secrets: conn.secrets, http: conn.http }, request);
}

/** OpenAI's list endpoints all take the same cursor parameters. */
export const pageQuery = (page: PageInput) => ({ after: page.after, limit: page.limit });

/** Ids go into paths; encoding keeps a hostile id from reaching another route. */
export const jobPath = (id: string, suffix = '') => `/fine_tuning/jobs/${encodeURIComponent(id)}${suffix}`;
export const filePath = (id: string, suffix = '') => `/files/${encodeURIComponent(id)}${suffix}`;
