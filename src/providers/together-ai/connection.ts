/**
 * What every Together AI operation shares: the API root (`GATEWAY_TOGETHER_BASE_URL`), the Bearer
 * key, and the hand-off to providerFetch / providerDownload.
 */
import type { Readable } from 'node:stream';
import { providerDownload, providerFetch, type HttpPolicy } from '../http';
import type { ProviderContent } from '../types';

export const TITLE = 'Together AI';

export interface TogetherConnection {
  /** The API root, e.g. `https://api.together.xyz/v1`. */
  baseUrl: string;
  headers: Readonly<Record<string, string>>;
  /** Credential values that must never appear in an error message. */
  secrets: readonly string[];
  http: HttpPolicy;
}

export interface TogetherRequest {
  method: 'GET' | 'POST' | 'DELETE';
  /** Below the API root, e.g. `/fine-tunes`. */
  path: string;
  json?: unknown;
  body?: Readable;
  headers?: Record<string, string>;
  idempotent?: boolean;
  upload?: boolean;
}

export const urlOf = (conn: TogetherConnection, path: string) => conn.baseUrl.replace(/\/+$/, '') + path;

export function togetherRequest<T>(conn: TogetherConnection, req: TogetherRequest): Promise<T> {
  return providerFetch<T>({
    provider: TITLE,
    method: req.method,
    url: urlOf(conn, req.path),
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
export function togetherDownload(conn: TogetherConnection, path: string): Promise<ProviderContent> {
  return providerDownload({ provider: TITLE, method: 'GET', url: urlOf(conn, path), headers: { ...conn.headers }, redact: conn.secrets, policy: conn.http });
}

/** Ids go into paths; encoding keeps a hostile id from reaching another route. */
export const jobPath = (id: string, suffix = '') => `/fine-tunes/${encodeURIComponent(id)}${suffix}`;
export const filePath = (id: string, suffix = '') => `/files/${encodeURIComponent(id)}${suffix}`;

/** Together's `{data: [...]}` lists (none of them paged by the API). */
export interface TogetherList<T> {
  data?: T[] | null;
}
