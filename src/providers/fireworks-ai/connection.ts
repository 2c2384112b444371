/**
 * What every Fireworks AI operation shares: the base URL (`GATEWAY_FIREWORKS_BASE_URL`), under which
 * the control plane answers at `/v1/accounts/{account}/…` and inference at `/inference/v1/…`; the
 * Bearer key; the account (a validated id); and the hand-off to providerFetch. Fireworks names its
 * resources `accounts/{account}/{collection}/{id}`: the gateway shows the short id for resources of
 * the caller's account and takes either form back.
 */
import { apiRequest, type ApiEndpoint, type ApiRequest } from '../api';
import type { SignedUrlPolicy } from '../signed-urls';
import { urlPath } from '../url';

export const TITLE = 'Fireworks AI';

export interface FireworksConnection extends ApiEndpoint {
  /** The API origin, e.g. `https://api.fireworks.ai`. */
  baseUrl: string;
  /** The account id (validated: lower-case letters, digits and "-"). */
  account: string;
  /** The deployment that serves the account's fine-tuned models, when the caller named one. */
  deployment: string | undefined;
  /** Where the signed URLs of datasets may point (signed-urls.ts). */
  signedUrls: SignedUrlPolicy;
}

/** A control-plane call under the caller's account (`path` below `/v1/accounts/{account}`). */
export const controlRequest = <T = unknown>(conn: FireworksConnection, req: ApiRequest<T>): Promise<T> =>
  apiRequest<T>(conn, { ...req, path: urlPath`/v1/accounts/${conn.account}` + req.path });

/** `accounts/{account}/{collection}/{id}` of the caller's account. */
export const resourceName = (conn: FireworksConnection, collection: string, id: string) => `accounts/${conn.account}/${collection}/${id}`;

/** The short id of a resource of the caller's account; a resource elsewhere keeps its full name. */
export function shortId(conn: FireworksConnection, collection: string, name: string): string {
  const prefix = `accounts/${conn.account}/${collection}/`;
  return name.startsWith(prefix) ? name.slice(prefix.length) : name;
}

/** A resource reference as the caller gave it (short id or full name) → its full name. */
export const fullName = (conn: FireworksConnection, collection: string, ref: string) =>
  ref.startsWith('accounts/') ? ref : resourceName(conn, collection, ref);

/** The path of one resource of the caller's account; the id is one segment, so a hostile one cannot reach another route (url.ts). */
export const resourcePath = (conn: FireworksConnection, collection: string, ref: string, verb = '') =>
  urlPath`/${collection}/${shortId(conn, collection, ref)}` + verb;

/** Fireworks resource ids: 1-63 of `[a-z0-9-]`, no hyphen at either end. */
export const RESOURCE_ID = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** `text` as (the start of) a resource id: lower-case, other characters as "-", at most `max` long; '' when nothing is left. */
export function slug(text: string, max: number): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, max)
    .replace(/^-+|-+$/g, '');
}
