/**
 * Google API conventions the fake Vertex AI shares between its resources: the `{error: {code, message,
 * status, details}}` shape, proto3 JSON field and value checks worded as Google words them, and list
 * pages (`pageSize`, `pageToken`, `filter`).
 */
import { FakeHttpError, type FailOptions, type FakeReply } from './kit';
import type { BearerProblem } from './google-auth';

const DEFAULT_PAGE_SIZE = 100;

const STATUS_BY_CODE: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'ABORTED',
  429: 'RESOURCE_EXHAUSTED',
  499: 'CANCELLED',
  500: 'INTERNAL',
  501: 'NOT_IMPLEMENTED',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

/** Google's `{error: {code, message, status, details}}`; `status` defaults from the HTTP code. */
export class VertexError extends FakeHttpError {
  constructor(status: number, message: string, details: { status?: string; details?: unknown[] } = {}, headers: Record<string, string> = {}) {
    super(status, message, details, headers);
  }
}

export function renderVertexError(e: FakeHttpError): FakeReply {
  const status = (e.details.status as string | undefined) ?? STATUS_BY_CODE[e.status] ?? 'UNKNOWN';
  const details = e.details.details as unknown[] | undefined;
  return { status: e.status, body: { error: { code: e.status, message: e.message, status, ...(details ? { details } : {}) } } };
}

const RESOURCE_EXHAUSTED_MESSAGE =
  'Resource exhausted. Please try again later. Please refer to https://cloud.google.com/vertex-ai/generative-ai/docs/error-code-429 for more details.';

export function vertexInjectedError(status: number, options: FailOptions): VertexError {
  if (status === 429) return new VertexError(429, options.message ?? RESOURCE_EXHAUSTED_MESSAGE);
  return new VertexError(status, options.message ?? (status >= 500 ? 'Internal error encountered.' : 'The request failed.'));
}

/** INVALID_ARGUMENT naming the field at fault, with the BadRequest detail Google adds. */
export function badRequest(field: string, message: string): VertexError {
  const details = [{ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [{ field, description: message }] }];
  return new VertexError(400, message, { details });
}

export const failedPrecondition = (message: string) => new VertexError(400, message, { status: 'FAILED_PRECONDITION' });

const AUTH_MESSAGE =
  'Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.';

/** Google's 401 for a request without a usable bearer token. */
export function unauthenticated(problem: BearerProblem, service: string): VertexError {
  const reason = { missing: 'CREDENTIALS_MISSING', invalid: 'ACCESS_TOKEN_TYPE_UNSUPPORTED', expired: 'ACCESS_TOKEN_EXPIRED' }[problem];
  const what = problem === 'missing' ? 'Request is missing required authentication credential' : 'Request had invalid authentication credentials';
  const message = `${what}. ${AUTH_MESSAGE}`;
  const details = [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason, domain: 'googleapis.com', metadata: { service } }];
  return new VertexError(401, message, { details }, { 'www-authenticate': 'Bearer realm="https://accounts.google.com/"' });
}

export const isObject = (value: unknown): value is Record<string, unknown> => !!value && typeof value === 'object' && !Array.isArray(value);
export const camelCase = (name: string) => name.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase());
export const snakeCase = (name: string) => name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);

/** Proto3 JSON as Google's front end reads a message: camelCase or snake_case names; an unknown name is a 400. */
export function protoFields(value: unknown, allowed: readonly string[], where: string): Record<string, unknown> {
  if (!isObject(value)) throw badRequest(where, `Invalid value at '${where}' (TYPE_MESSAGE), ${JSON.stringify(value)}`);
  const fields: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    const name = camelCase(key);
    const at = where ? ` at '${where}'` : '';
    if (!allowed.includes(name)) throw badRequest(where, `Invalid JSON payload received. Unknown name "${key}"${at}: Cannot find field.`);
    fields[name] = field;
  }
  return fields;
}

export const invalidValue = (where: string, type: string, value: unknown) =>
  badRequest(where, `Invalid value at '${where}' (${type}), ${JSON.stringify(value)}`);

/** An int64 as proto3 JSON carries it (a number or a decimal string), returned the way Vertex echoes it: a string. */
export function int64(value: unknown, where: string): string {
  if ((typeof value === 'number' && Number.isInteger(value)) || (typeof value === 'string' && /^-?\d+$/.test(value))) return String(value);
  throw invalidValue(where, 'TYPE_INT64', value);
}

export function double(value: unknown, where: string): number {
  const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof number === 'number' && Number.isFinite(number)) return number;
  throw invalidValue(where, 'TYPE_DOUBLE', value);
}

/** An enum by name, or by number as proto3 JSON also allows; echoed by name. */
export function enumValue(value: unknown, names: readonly string[], type: string, where: string): string {
  if (typeof value === 'string' && names.includes(value)) return value;
  if (typeof value === 'number' && Number.isInteger(value) && names[value] !== undefined) return names[value];
  throw invalidValue(where, `type.googleapis.com/google.cloud.aiplatform.v1.${type}`, value);
}

export function stringValue(value: unknown, where: string): string {
  if (typeof value === 'string') return value;
  throw invalidValue(where, 'TYPE_STRING', value);
}

export type FilterFields<T> = Record<string, (job: T) => string | undefined>;

/**
 * A list filter: clauses joined by AND over the given fields and labels: `field = "value"`, `!=`,
 * `labels.key:*` (the label is set), and `<` / `>` on times (`create_time<"2026-01-01T00:00:00Z"`).
 */
function parseFilter<T extends { labels?: Record<string, string> }>(filter: string, fields: FilterFields<T>): (job: T) => boolean {
  const compare: Record<string, (actual: string | undefined, expected: string) => boolean> = {
    '=': (actual, expected) => actual === expected,
    '!=': (actual, expected) => actual !== expected,
    ':': (actual, expected) => expected === '*' && actual !== undefined,
    '<': (actual, expected) => actual !== undefined && Date.parse(actual) < Date.parse(expected),
    '>': (actual, expected) => actual !== undefined && Date.parse(actual) > Date.parse(expected),
  };
  const clauses = filter
    .split(/\s+AND\s+/i)
    .filter((clause) => clause.trim())
    .map((clause) => {
      const m = /^\s*([\w.]+)\s*(!=|=|:|<|>)\s*"?([^"]*)"?\s*$/.exec(clause);
      if (!m) throw badRequest('filter', `Invalid filter: ${filter}`);
      const [, field, op, expected] = m;
      const label = field.startsWith('labels.') ? field.slice('labels.'.length) : undefined;
      const name = camelCase(field);
      const read = label ? (job: T) => job.labels?.[label] : Object.hasOwn(fields, name) ? fields[name] : undefined;
      if (!read) throw badRequest('filter', `Unsupported filter field: ${field}`);
      return (job: T) => compare[op](read(job), expected);
    });
  return (job) => clauses.every((matches) => matches(job));
}

/**
 * One page of a Vertex list (`pageSize`, `pageToken`, `filter`), newest first; like Vertex, an empty
 * list is `{}` and the last page has no token.
 */
export function listPage<T extends { labels?: Record<string, string> }>(items: T[], query: URLSearchParams, key: string, fields: FilterFields<T>) {
  const pageSize = query.has('pageSize') ? Number(query.get('pageSize')) : DEFAULT_PAGE_SIZE;
  if (!Number.isInteger(pageSize) || pageSize < 0) throw invalidValue('page_size', 'TYPE_INT32', query.get('pageSize'));
  const offset = query.get('pageToken') ? Number(Buffer.from(query.get('pageToken')!, 'base64url').toString('utf8')) : 0;
  if (!Number.isInteger(offset) || offset < 0) throw badRequest('page_token', 'Invalid page token.');
  const newestFirst = [...items].reverse().filter(parseFilter(query.get('filter') ?? '', fields));
  const size = pageSize === 0 ? DEFAULT_PAGE_SIZE : pageSize;
  const page = newestFirst.slice(offset, offset + size);
  const more = offset + size < newestFirst.length;
  const nextPageToken = Buffer.from(String(offset + size)).toString('base64url');
  return { ...(page.length ? { [key]: page } : {}), ...(more ? { nextPageToken } : {}) };
}
