import { GatewayError, badRequest } from '../errors';

/** REST speaks snake_case, the services camelCase. */
export const snakeToCamel = (key: string) => key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
export const camelToSnake = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/**
 * A REST body or query with its top-level keys in camelCase. A camelCase key sent over REST is not
 * a REST field name, so it is refused rather than silently accepted.
 */
export function camelizeKeys(input: unknown, what = 'body'): Record<string, unknown> {
  if (input === undefined || input === null) return {};
  if (typeof input !== 'object' || Array.isArray(input)) throw badRequest(`The request ${what} must be a JSON object`, null);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) {
    if (/[A-Z]/.test(key)) throw new RestFieldError(key);
    out[snakeToCamel(key)] = value;
  }
  return out;
}

/** An error about a field exactly as the REST caller spelled it: not re-spelled by the error mapper. */
export class RestFieldError extends GatewayError {
  constructor(key: string) {
    super('invalid_request', `Unknown field '${key}'`, { param: key, code: 'invalid_request' });
  }
}
