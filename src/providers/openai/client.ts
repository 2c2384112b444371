/**
 * What every OpenAI operation shares: the base URL, the auth and scoping headers, and the policy
 * hand-off to `providerFetch`. Kept apart from the operations so each of those stays a few lines.
 */
import type { Readable } from 'node:stream';
import { GatewayError } from '../../errors';
import { providerFetch } from '../http';
import type { PageInput, ProviderContext } from '../types';

export interface OpenAIRequest {
  method: 'GET' | 'POST';
  /** Below the base URL, e.g. `/fine_tuning/jobs`. */
  path: string;
  query?: Record<string, string | number | undefined>;
  json?: unknown;
  body?: Readable;
  headers?: Record<string, string>;
  idempotent?: boolean;
  upload?: boolean;
}

export function openaiHeaders(ctx: ProviderContext): Record<string, string> {
  const apiKey = ctx.credentials.apiKey;
  // Fail here rather than send `Bearer undefined` and blame the provider for the 401.
  if (!apiKey) throw new GatewayError('provider', 'OpenAI credentials are missing an apiKey', { status: 401 });
  const headers: Record<string, string> = { authorization: `Bearer ${apiKey}` };
  if (ctx.options.organization) headers['openai-organization'] = ctx.options.organization;
  if (ctx.options.project) headers['openai-project'] = ctx.options.project;
  return headers;
}

export function openaiRequest<T>(ctx: ProviderContext, req: OpenAIRequest): Promise<T> {
  const url = new URL(ctx.baseUrl.replace(/\/+$/, '') + req.path);
  for (const [key, value] of Object.entries(req.query ?? {})) {
    if (value !== undefined) url.searchParams.set(key, String(value));
  }
  return providerFetch<T>({
    provider: 'OpenAI',
    method: req.method,
    url: url.toString(),
    headers: { ...openaiHeaders(ctx), ...req.headers },
    json: req.json,
    body: req.body,
    idempotent: req.idempotent,
    upload: req.upload,
    redact: Object.values(ctx.credentials),
    policy: ctx.http,
  });
}

/** OpenAI's list endpoints all take the same cursor parameters. */
export const pageQuery = (page: PageInput) => ({ after: page.after, limit: page.limit });

/** Ids go into paths; encoding keeps a hostile id from reaching another route. */
export const jobPath = (id: string, suffix = '') => `/fine_tuning/jobs/${encodeURIComponent(id)}${suffix}`;
