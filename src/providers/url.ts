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

/**
 * The URL of `path` (starting with "/") below `base`, with `query`. Refused (400 `invalid_id`, before
 * any connection) when parsing changed the path: a dot segment was folded, so the call would not go
 * where its builder meant it to.
 */
export function providerUrl(base: string, path: string, query: Query = {}): string {
  const root = base.replace(/\/+$/, '');
  const url = new URL(root + path);
  const expected = new URL(root).pathname.replace(/\/$/, '') + path;
  if (url.pathname !== expected) throw changedPath();
  for (const [key, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(key, String(value));
  return url.toString();
}
