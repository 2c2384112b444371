/**
 * Provider URLs, made in one place. An id reaches a provider's path as one percent-encoded segment,
 * but encoding leaves `.` and `..` as they are and URL parsing folds them (`/files/..` is `/`), so an
 * id of `..` would move a call to another route with the caller's (or a stored integration's)
 * credentials. Two guards, both before any connection: ids that are dot segments in any spelling are
 * refused with a 400 naming them ({@link checkProviderId}, for every provider), and every URL built
 * here must keep exactly the path it was given ({@link providerUrl}), whatever put a dot segment in.
 */
import { GatewayError } from '../errors';

export type Query = Readonly<Record<string, string | number | undefined>>;

/** `.` and `..`, also percent-encoded (`%2E`, `%2e%2E`…): what a URL parser treats as a dot segment. */
const DOT_SEGMENT = /^(?:\.|%2e){1,2}$/i;

const invalidId = (message: string, path?: string) => new GatewayError('invalid_request', message, { path, code: 'invalid_id' });

/** A provider id the caller gave (`field` names it as the services do: `fileId`, `jobId`), refused when it is a dot segment. */
export function checkProviderId(id: string, field: string): void {
  if (DOT_SEGMENT.test(id)) throw invalidId(`'${id}' is not an id: "." and ".." would change the provider's path`, field);
}

/** A URL that parsing would move elsewhere (its path changed): refused before any connection. */
export const changedPath = () => invalidId('An id in this request would change the path of the provider call');

/** Whether a URL path (as sent on the wire) holds a `.` or `..` segment that a server may fold. */
export const hasDotSegment = (path: string): boolean =>
  path
    .split('?')[0]
    .split('/')
    .some((s) => DOT_SEGMENT.test(s));

/**
 * A path from literal parts and values, each value one percent-encoded segment (or part of one):
 * ``urlPath`/files/${id}/content` ``. The literals are the caller's own, never input.
 */
export function urlPath(literals: TemplateStringsArray, ...values: string[]): string {
  return literals.reduce((out, literal, i) => out + literal + (i < values.length ? encodeURIComponent(values[i]) : ''), '');
}

/** A base URL as parsed once: `href` is what a path is appended to, when the base is a plain http(s) root. */
interface Root {
  trimmed: string;
  pathname: string;
  href: string | null;
}

/** Bases in use (a few per provider, and the hosts header settings name): bounded, since a setting can name any host. */
const roots = new Map<string, Root>();
const MAX_ROOTS = 256;

function rootOf(base: string): Root {
  let root = roots.get(base);
  if (root) return root;
  const trimmed = base.replace(/\/+$/, '');
  const url = new URL(trimmed);
  const pathname = url.pathname.replace(/\/$/, '');
  const plain = (url.protocol === 'https:' || url.protocol === 'http:') && !url.search && !url.hash && !url.username && !url.password;
  root = { trimmed, pathname, href: plain ? url.origin + pathname : null };
  if (roots.size >= MAX_ROOTS) roots.clear();
  roots.set(base, root);
  return root;
}

/** Path characters a URL parser keeps as they are (what `urlPath` and the adapters' literals produce). */
const KEPT_PATH = /^[A-Za-z0-9\-._~!$&'()*+,;=:@%/]*$/;
/** A `.` or `..` segment, also percent-encoded. */
const DOT_SEGMENT_IN_PATH = /(?:^|\/)(?:\.|%2e){1,2}(?:\/|$)/i;

/** A query parameter as URLSearchParams writes it (form encoding: only alphanumerics and `*-._` as they are, a space as `+`). */
const formEncoded = (text: string) =>
  encodeURIComponent(text).replace(/[!'()~]|%20/g, (c) => (c === '%20' ? '+' : `%${c.charCodeAt(0).toString(16).toUpperCase()}`));

/**
 * The URL of `path` (starting with "/") below `base`, with `query`. Refused (400 `invalid_id`, before
 * any connection) when parsing changed the path: a dot segment was folded, so the call would not go
 * where its builder meant it to. A path of characters parsing keeps, without dot segments, below a
 * plain base is joined as text (the same URL, without parsing it on every call).
 */
export function providerUrl(base: string, path: string, query: Query = {}): string {
  const root = rootOf(base);
  if (root.href !== null && KEPT_PATH.test(path) && !DOT_SEGMENT_IN_PATH.test(path)) {
    try {
      let search = '';
      for (const key in query) {
        const value = query[key];
        if (value !== undefined) search += `${search ? '&' : '?'}${formEncoded(key)}=${formEncoded(String(value))}`;
      }
      return root.href + path + search;
    } catch {
      // A lone surrogate (encodeURIComponent refuses it; URLSearchParams writes U+FFFD): parsed below.
    }
  }
  const url = new URL(root.trimmed + path);
  if (url.pathname !== root.pathname + path) throw changedPath();
  for (const [key, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(key, String(value));
  return url.toString();
}
