import type { Request, RequestHandler, Response } from 'express';
import type { Caller, Scope } from '../auth/scope';
import { badRequest, forbidden } from '../errors';
import type { Services } from '../services';
import { isOrganisationKey } from '../auth/scope';

export const API_KEY_HEADER = 'x-gateway-api-key';

/** Resolves the API key of every request; 401 in the error shape otherwise. */
export function authenticate(services: Services): RequestHandler {
  return async (req, res, next) => {
    res.locals.caller = await services.apiKeys.authenticate(req.header(API_KEY_HEADER));
    next();
  };
}

export const callerOf = (res: Response): Caller => res.locals.caller as Caller;

/** Administration is for organisation keys; a workspace key gets 403. */
export const requireOrganisationKey: RequestHandler = (_req, res, next) => {
  if (!isOrganisationKey(callerOf(res))) throw forbidden('This operation needs an organisation (admin) API key');
  next();
};

/** One query parameter as a string; a repeated parameter is ambiguous and refused. */
export function queryParam(req: Request, name: string): string | undefined {
  const value = req.query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw badRequest(`Query parameter ${name} must be given once`, name);
  return value;
}

/** The request's query parameters as a plain object of strings, for a service's list input. */
export function queryObject(req: Request, names: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of Object.keys(req.query)) {
    if (!names.includes(key)) throw badRequest(`Unknown query parameter '${key}'`, key);
    out[key] = queryParam(req, key)!;
  }
  return out;
}

/** The query parameters every tenant-scoped route accepts. */
export const SCOPE_PARAMS = ['workspace_id', 'organisation_id'] as const;

/** The scope of a request that takes no query parameters besides SCOPE_PARAMS (others are 400). */
export function requestScope(services: Services, req: Request, res: Response, bodyWorkspace?: unknown): Promise<Scope> {
  queryObject(req, SCOPE_PARAMS);
  return scopeOf(services, req, res, bodyWorkspace);
}

/** The tenant scope of a request: `workspace_id` from the query or the body, `organisation_id` from the query. */
export function scopeOf(services: Services, req: Request, res: Response, bodyWorkspace?: unknown): Promise<Scope> {
  const fromBody = typeof bodyWorkspace === 'string' ? bodyWorkspace : undefined;
  if (bodyWorkspace !== undefined && fromBody === undefined) throw badRequest('workspace_id must be a string', 'workspace_id');
  return services.workspaces.resolveScope(callerOf(res), queryParam(req, 'workspace_id') ?? fromBody, queryParam(req, 'organisation_id'));
}

/** Wraps a handler whose result is the JSON body of a 200. */
export function json(handler: (req: Request, res: Response) => Promise<unknown>): RequestHandler {
  return async (req, res) => {
    const body = await handler(req, res);
    res.status(200).json(body);
  };
}

/** A path parameter as a string. */
export function pathParam(req: Request, name: string): string {
  const value = req.params[name];
  return Array.isArray(value) ? value.join('/') : String(value);
}
