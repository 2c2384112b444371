import type { Request, RequestHandler, Response } from 'express';
import type { Caller, LazyScope, Scope } from '../auth/scope';
import { isOrganisationKey } from '../auth/scope';
import { badRequest, forbidden, GatewayError } from '../errors';
import { lazy } from '../lazy';
import type { FailedAuthLimiter } from '../modules/rate-limits/failed-auth.limiter';
import type { Services } from '../services';
import { untrustedInput, type Untrusted } from '../validation/parse';
import { fromRest, restPath } from './case';
import { invalidText, isStorableText } from '../validation/text';

export const API_KEY_HEADER = 'x-gateway-api-key';

/**
 * The gateway key of a request: the x-gateway-api-key header, or else `Authorization: Bearer gw_…`
 * (so the OpenAI SDK's `apiKey` can carry it). A request naming a provider (`x-gateway-provider`,
 * client mode) may carry the provider's own key there, so its Authorization is never read as ours.
 */
export function apiKeyOf(req: Request): string | undefined {
  const header = req.get(API_KEY_HEADER);
  if (header !== undefined || req.headers['x-gateway-provider'] !== undefined) return header;
  const bearer = /^Bearer\s+(gw_\S+)$/i.exec(req.headers.authorization ?? '');
  return bearer?.[1];
}

/** Resolves the API key of every request; 401 in the error shape otherwise. */
export function authenticate(services: Services, failures: FailedAuthLimiter): RequestHandler {
  return (req, res, next) => {
    // A cached key (most requests) goes on at once, without waiting for a promise.
    const cached = services.apiKeys.cachedCaller(apiKeyOf(req));
    if (cached) {
      res.locals.caller = cached;
      return next();
    }
    return authenticateRequest(services, failures, req).then((caller) => {
      res.locals.caller = caller;
      next();
    });
  };
}

/**
 * The caller of a request, looked up once per request (GraphQL's rate limit and its context both ask).
 * A key that is not in the cache is looked up only if the client is not refused for failing too often
 * (429), and a lookup that finds no active key counts as a failure of the client.
 */
export function authenticateRequest(services: Services, failures: FailedAuthLimiter, req: Request): Promise<Caller> {
  const locals = (req.res as Response).locals;
  if (!locals.authentication) {
    const cached = services.apiKeys.cachedCaller(apiKeyOf(req));
    locals.authentication = cached ? Promise.resolve(cached) : lookUpCaller(services, failures, req);
  }
  return locals.authentication;
}

async function lookUpCaller(services: Services, failures: FailedAuthLimiter, req: Request): Promise<Caller> {
  // The client's address (behind trusted proxies) is worked out only when the key is not cached.
  const client = () => req.ip ?? req.socket.remoteAddress ?? 'unknown';
  let lookedUp = false;
  try {
    return await services.apiKeys.authenticate(apiKeyOf(req), () => {
      failures.refuseIfBlocked(client());
      lookedUp = true;
    });
  } catch (err) {
    if (lookedUp && err instanceof GatewayError && err.kind === 'unauthenticated') await failures.failed(client());
    throw err;
  }
}

export const callerOf = (res: Response): Caller => res.locals.caller;

/** Administration is for organisation keys; a workspace key gets 403. */
export const requireOrganisationKey: RequestHandler = (_req, res, next) => {
  if (!isOrganisationKey(callerOf(res))) throw forbidden('This operation needs an organisation (admin) API key');
  next();
};

/** One query parameter as a string; a repeated parameter is ambiguous and refused. */
export function queryParam(req: Request, name: string): string | undefined {
  return singleValue(name, req.query[name]);
}

function singleValue(name: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new GatewayError('invalid_request', 'must be given once', { param: name, aboutField: true, code: 'invalid_request' });
  return value;
}

/** The query parameters every tenant-scoped route accepts: they choose the workspace. */
const isScopeParam = (key: string) => key === 'workspace_id' || key === 'organisation_id';

/** The request's query parameters as a plain object of strings; a parameter neither a scope one nor in `params` is a 400. */
function queryObject(req: Request, params: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  // Express parses the query string again on every read of `req.query`: read once.
  const query = req.query;
  for (const key of Object.keys(query)) {
    if (!isScopeParam(key) && !params.includes(key))
      throw new GatewayError('invalid_request', 'is not a known query parameter', { param: key, aboutField: true, code: 'invalid_request' });
    const value = singleValue(key, query[key]);
    if (value !== undefined) out[key] = value;
  }
  return out;
}

/** What a tenant-scoped handler works with: the scope, and the query and body as raw service input. */
export interface TenantRequest {
  scope: Scope;
  /** The route's own query parameters (camelCase keys), for the service to validate. */
  query: Untrusted;
  /** The JSON body without `workspace_id` (camelCase keys), for the service to validate. */
  body: Untrusted;
}

/** Finds the workspace a caller names (a UUID or slug; none: the key's own), within what its key may reach: the workspace service. */
export interface ScopeResolver {
  resolveScope(caller: Caller, workspaceRef?: string | null, organisationRef?: string | null): Promise<Scope>;
}

/**
 * The one way a route learns its tenant: `workspace_id` (query or JSON body; a UUID or slug) and
 * `organisation_id` choose the workspace, within what the API key may reach. `params` are the other
 * query parameters the route takes; any other is a 400.
 */
export async function tenantRequest(scopes: ScopeResolver, req: Request, res: Response, params: readonly string[] = []): Promise<TenantRequest> {
  const { scope, ...rest } = await lazyTenantRequest(scopes, req, res, params);
  return { scope: await scope(), ...rest };
}

/** A tenant request whose workspace is looked up only if the handler asks for it. */
export interface LazyTenantRequest extends Omit<TenantRequest, 'scope'> {
  scope: LazyScope;
}

/**
 * `tenantRequest` for handlers that may not need the workspace at all (client mode with header
 * credentials stores nothing and reads nothing): no query unless asked. A request that names a
 * workspace or organisation still has it checked at once, so a wrong one fails the same everywhere.
 */
export async function lazyTenantRequest(
  scopes: ScopeResolver,
  req: Request,
  res: Response,
  params: readonly string[] = [],
  /** `as-sent`: the body keeps its snake_case keys (a protocol the gateway relays, such as OpenAI's chat request). */
  body: 'camelCase' | 'as-sent' = 'camelCase',
): Promise<LazyTenantRequest> {
  const { workspace_id: fromQuery, organisation_id: organisationRef, ...query } = queryObject(req, params);
  const { workspace_id: fromBody, ...rest } = bodyObject(req);
  if (fromBody !== undefined && typeof fromBody !== 'string')
    throw new GatewayError('invalid_request', 'must be a string', { param: 'workspace_id', aboutField: true, code: 'invalid_request' });
  const workspaceRef = fromQuery ?? fromBody;
  const scope = lazy(() => scopes.resolveScope(callerOf(res), workspaceRef, organisationRef));
  if (workspaceRef !== undefined || organisationRef !== undefined) await scope();
  return { scope, query: fromRest(query, 'query'), body: body === 'as-sent' ? untrustedInput(rest) : fromRest(rest) };
}

/** The parsed JSON body as an object (none: empty); any other JSON value is refused. */
function bodyObject(req: Request): Record<string, unknown> {
  const body: unknown = req.body;
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) throw badRequest('The request body must be a JSON object', null, 'invalid_request');
  return { ...body };
}

/** Wraps a handler whose result is the JSON body of a 200. */
export function json(handler: (req: Request, res: Response) => Promise<unknown>): RequestHandler {
  return async (req, res) => {
    const body = await handler(req, res);
    res.status(200).json(body);
  };
}

/** A path parameter as a string; text Postgres cannot store is a 400 naming it (`file_id`). */
export function pathParam(req: Request, name: string): string {
  const raw = req.params[name];
  const value = Array.isArray(raw) ? raw.join('/') : String(raw);
  if (!isStorableText(value)) throw invalidText(restPath([name]));
  return value;
}

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace -- Express types its per-request locals through this namespace
  namespace Express {
    interface Locals {
      /** Set by `authenticate` on every /v1 request. */
      caller: Caller;
      /** The request's one API key lookup (authenticateRequest). */
      authentication?: Promise<Caller>;
    }
  }
}
