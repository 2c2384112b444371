import { badRequest, GatewayError, type FieldPath } from '../errors';
import { untrustedInput, type Untrusted } from '../validation/parse';

/** REST speaks snake_case, the services camelCase; this is the one place that converts between them. */
const snakeToCamel = (key: string) => key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
const camelToSnake = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/**
 * Fields whose values are maps with caller-chosen keys (metadata, provider credentials and
 * settings): their keys are data, not field names, and keep their spelling both ways.
 */
const MAP_FIELDS = new Set(['metadata', 'credentials', 'options', 'gatewayOptions']);

/**
 * A REST body or query as a service's raw input: keys converted to camelCase at every depth except
 * inside map fields. A camelCase key is not a REST field name, so it is refused rather than silently
 * accepted under another spelling.
 */
export function fromRest(value: unknown, what = 'body'): Untrusted {
  if (value === undefined || value === null) return untrustedInput({});
  if (typeof value !== 'object' || Array.isArray(value)) throw badRequest(`The request ${what} must be a JSON object`, null, 'invalid_request');
  return untrustedInput(camelize(value, []));
}

function camelize(value: unknown, path: string[]): unknown {
  if (Array.isArray(value)) return value.map((item) => camelize(item, path));
  if (value === null || typeof value !== 'object') return value;
  if (MAP_FIELDS.has(path[path.length - 1])) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    if (/[A-Z]/.test(key)) {
      const param = [...path.map(camelToSnake), key].join('.');
      throw new GatewayError('invalid_request', 'is not a known field', { param, aboutField: true, code: 'invalid_request' });
    }
    const camel = snakeToCamel(key);
    out[camel] = camelize(item, [...path, camel]);
  }
  return out;
}

/** A service's field path as a REST caller names it: `method.supervised.hyperparameters.n_epochs`. */
export function restPath(path: FieldPath): string {
  const out: string[] = [];
  let inMap = false;
  for (const segment of path) {
    if (typeof segment === 'number') out.push(String(segment));
    else out.push(inMap ? segment : camelToSnake(segment));
    inMap = typeof segment === 'string' && !inMap && MAP_FIELDS.has(segment);
  }
  return out.join('.');
}

/** A stored field path (`trainingFile`, `method.hyperparameters.nEpochs`, joined by dots) as a REST caller names it. */
export const restParam = (dotted: string): string => restPath(dotted.split('.').map((segment) => (/^\d+$/.test(segment) ? Number(segment) : segment)));
