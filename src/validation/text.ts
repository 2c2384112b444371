import { GatewayError, type FieldPath } from '../errors';

/**
 * Text Postgres cannot store: the NUL character (U+0000, refused in `text` and `jsonb` alike) and
 * UTF-16 surrogates without their other half (JSON's `"\ud800"`, which has no UTF-8 form).
 */
// eslint-disable-next-line no-control-regex -- NUL is exactly what is looked for.
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export const INVALID_TEXT = 'invalid_text';

const REASON = 'must not contain NUL characters (U+0000) or unpaired UTF-16 surrogates';

export const isStorableText = (text: string): boolean => !UNSTORABLE.test(text);

/**
 * The path of the first string in `value` (object keys included) that Postgres cannot store, or
 * null. Keys are named with the offending characters replaced, so the answer never echoes them.
 */
export function unstorableTextPath(value: unknown, path: FieldPath = []): FieldPath | null {
  if (typeof value === 'string') return isStorableText(value) ? null : path;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = unstorableTextPath(value[i], [...path, i]);
      if (found) return found;
    }
    return null;
  }
  if (!isPlainObject(value)) return null;
  for (const [key, item] of Object.entries(value)) {
    if (!isStorableText(key)) return [...path, key.replace(new RegExp(UNSTORABLE, 'g'), '\uFFFD')];
    const found = unstorableTextPath(item, [...path, key]);
    if (found) return found;
  }
  return null;
}

/** Parsed JSON and query strings; not the objects of libraries (a GraphQL upload, say). */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** The 400 for text Postgres cannot store, naming the field as the caller spelled it. */
export const invalidText = (param: string): GatewayError => new GatewayError('invalid_request', REASON, { param, aboutField: true, code: INVALID_TEXT });

/** Throws {@link invalidText} when `value` holds text Postgres cannot store; `name` prefixes the field named. */
export function refuseUnstorableText(value: unknown, name?: string): void {
  const path = unstorableTextPath(value);
  if (path) throw invalidText([...(name === undefined ? [] : [name]), ...path].join('.'));
}
