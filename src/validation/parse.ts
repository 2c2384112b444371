import { z, type ZodTypeAny } from 'zod';
import { badRequest } from '../errors';

/**
 * Validates an input against its schema; the first problem becomes a 400 naming the field.
 * Services call this on entry, so both faces (and the admin CLI) share one set of rules.
 */
export function parseInput<S extends ZodTypeAny>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0];
    return failWith(`Unknown field '${key}'`, [...issue.path, key]);
  }
  const path = issue.path;
  const field = path.length ? String(path[path.length - 1]) : null;
  const message = issue.message.startsWith(field ?? '\u0000') ? issue.message : `${field ? `${field}: ` : ''}${issue.message}`;
  return failWith(message, path);
}

function failWith(message: string, path: (string | number)[]): never {
  throw badRequest(message, path.length ? path.join('.') : null, 'invalid_request');
}

export const uuid = (field: string) => z.string().uuid({ message: `${field} must be a UUID` });

/** A workspace named by UUID or slug. */
export const workspaceRef = z.string().trim().min(1).max(100);

/** Integers given as query strings ("20") or JSON numbers, with a clear message when out of range. */
export const intInRange = (field: string, min: number, max: number) =>
  z.preprocess(
    (v) => (typeof v === 'string' && v.trim() !== '' ? Number(v) : v),
    z
      .number({ invalid_type_error: `${field} must be an integer between ${min} and ${max}` })
      .int(`${field} must be an integer between ${min} and ${max}`)
      .min(min, `${field} must be an integer between ${min} and ${max}`)
      .max(max, `${field} must be an integer between ${min} and ${max}`),
  );

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isUuid = (value: string) => UUID.test(value);

/** What a service accepts: its typed input, or a caller's raw object that it validates itself. */
export type Unvalidated<T> = T | Record<string, unknown>;
