/**
 * The request headers that carry provider settings (api.md §5–6): `x-gateway-provider` names the
 * provider or `@slug`, the other `x-gateway-*` headers (and `authorization`) carry settings. Client
 * mode, chat and the GraphQL faces that build the same map from their input all read them this way.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Request } from 'express';

export const PROVIDER_HEADER = 'x-gateway-provider';

/** The request's headers, lower-case names (as Node gives them). */
export type RequestHeaders = Readonly<Record<string, string | undefined>>;

export const headersOf = (req: Request): RequestHeaders => flatHeaders(req.headers);

/**
 * Node's headers with repeated ones joined, as providers' settings are single values. Node joins
 * repeated headers itself except a few (`set-cookie`): without one of those, its object is used as it is.
 */
function flatHeaders(headers: IncomingHttpHeaders): RequestHeaders {
  for (const name in headers) {
    if (Array.isArray(headers[name]))
      return Object.fromEntries(Object.entries(headers).map(([key, value]) => [key, Array.isArray(value) ? value.join(', ') : value]));
  }
  return headers as RequestHeaders;
}
