import { z, type ZodErrorMap, type ZodIssue, type ZodTypeAny } from 'zod';
import { badRequest, invalidField, type FieldPath, type GatewayError } from '../errors';

/** The page size cap of every list input (REST and GraphQL); not configurable, the services enforce it. */
export const MAX_PAGE_SIZE = 100;

declare const untrusted: unique symbol;

/**
 * A caller's raw input (a REST body or query string) that a service validates itself. It is a brand,
 * not a shape: only a face's edge makes one ({@link untrustedInput}), so typed callers (GraphQL
 * resolvers, the CLI, tests) must pass the service's typed input and a misspelled field fails `tsc`.
 */
export interface Untrusted {
  readonly [untrusted]: true;
}

/** What a service method accepts: its typed input, or raw input from a face's edge. */
export type Input<T> = T | Untrusted;

/** Marks a value from the wire as raw input for a service to validate. */
export const untrustedInput = (value: unknown): Untrusted => value as Untrusted;

const bound = (n: number | bigint) => String(n);

/**
 * Reasons, never field names: the face that reports an error names the field in its own spelling
 * (`color_code: must be …` on REST, `colorCode: must be …` on GraphQL).
 */
const reasons: ZodErrorMap = (issue, ctx) => {
  switch (issue.code) {
    case 'invalid_type':
      if (issue.received === 'undefined') return { message: 'is required' };
      if (issue.expected === 'integer') return { message: 'must be an integer' };
      return { message: `must be ${issue.expected === 'object' ? 'an object' : issue.expected === 'array' ? 'an array' : `a ${issue.expected}`}` };
    case 'too_small':
      if (issue.type === 'string')
        return { message: Number(issue.minimum) === 1 ? 'must not be empty' : `must be at least ${bound(issue.minimum)} characters` };
      if (issue.type === 'array') return { message: `must have at least ${bound(issue.minimum)} items` };
      return { message: `must be ${issue.inclusive ? 'at least' : 'above'} ${bound(issue.minimum)}` };
    case 'too_big':
      if (issue.type === 'string') return { message: `must be at most ${bound(issue.maximum)} characters` };
      if (issue.type === 'array') return { message: `must have at most ${bound(issue.maximum)} items` };
      return { message: `must be ${issue.inclusive ? 'at most' : 'below'} ${bound(issue.maximum)}` };
    case 'invalid_enum_value':
      return { message: `must be one of ${issue.options.join(', ')}` };
    case 'invalid_string':
      if (issue.validation === 'uuid') return { message: 'must be a UUID' };
      return { message: 'has an invalid format' };
    default:
      return { message: ctx.defaultError };
  }
};

/** The gateway error for the first problem zod found, in an input found at `at` of the caller's. */
function fromIssue(issue: ZodIssue, at: FieldPath): GatewayError {
  if (issue.code === 'unrecognized_keys') return invalidField([...at, ...issue.path, issue.keys[0]], 'is not a known field');
  if (!issue.path.length && !at.length)
    return badRequest(issue.code === 'invalid_type' ? 'The input must be an object' : issue.message, null, 'invalid_request');
  return invalidField([...at, ...issue.path], issue.message);
}

/**
 * Validates an input against its schema; the first problem becomes a 400 naming the field by its
 * path (under `at`, for a part of the caller's input). Services call this on entry, so both faces (and the admin CLI) share one set of rules.
 */
export function parseInput<S extends ZodTypeAny>(schema: S, input: unknown, at: FieldPath = []): z.output<S> {
  const result: z.SafeParseReturnType<z.input<S>, z.output<S>> = schema.safeParse(input ?? {}, { errorMap: reasons });
  if (result.success) return result.data;
  throw fromIssue(result.error.issues[0], at);
}

/** Each query schema's result for an empty query, parsed once (frozen: it is shared). */
const emptyQueries = new WeakMap<ZodTypeAny, unknown>();

/**
 * `parseInput` for a query string's parameters: most list calls send none, and an empty query always
 * parses to the schema's defaults, so that result is computed once per schema instead of per call.
 */
export function parseQuery<S extends ZodTypeAny>(schema: S, query: object): z.output<S> {
  for (const _ in query) return parseInput(schema, query);
  if (!emptyQueries.has(schema)) emptyQueries.set(schema, Object.freeze(parseInput(schema, {})));
  return emptyQueries.get(schema);
}

export const uuid = z.string().uuid();

/** A workspace named by UUID or slug. */
export const workspaceRef = z.string().trim().min(1).max(100);

/** Integers given as query strings ("20") or JSON numbers, with one message for every way to miss the range. */
export const intInRange = (min: number, max: number) => {
  const message = `must be an integer between ${min} and ${max}`;
  return z.preprocess(
    (v) => (typeof v === 'string' && v.trim() !== '' ? Number(v) : v),
    z.number({ invalid_type_error: message }).int(message).min(min, message).max(max, message),
  );
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isUuid = (value: string) => UUID.test(value);
