import { GatewayError, type FieldPath } from '../errors';

/**
 * Text Postgres cannot store: the NUL character (U+0000, refused in `text` and `jsonb` alike) and
 * UTF-16 surrogates without their other half (JSON's `"\ud800"`, which has no UTF-8 form).
 */
// eslint-disable-next-line no-control-regex -- NUL is exactly what is looked for.
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const EVERY_UNSTORABLE = new RegExp(UNSTORABLE, 'g');

export const INVALID_TEXT = 'invalid_text';

const REASON = 'must not contain NUL characters (U+0000) or unpaired UTF-16 surrogates';

export const isStorableText = (text: string): boolean => !UNSTORABLE.test(text);

/** The text with what Postgres cannot store replaced by U+FFFD: for text the gateway keeps but no caller sent (a provider's ids). */
export const storableText = (text: string): string => (isStorableText(text) ? text : text.replace(EVERY_UNSTORABLE, '\uFFFD'));

/** A place in the walked value: its key in its parent, linked up to the root. */
interface Place {
  value: unknown;
  key: string | number | null;
  parent: Place | null;
}

const pathOf = (place: Place, extra: FieldPath = []): FieldPath => {
  const reversed: (string | number)[] = [];
  for (let at: Place | null = place; at && at.key !== null; at = at.parent) reversed.push(at.key);
  return [...reversed.reverse(), ...extra];
};

/**
 * The path of the first string in `value` (object keys included) that Postgres cannot store, or
 * null. Keys are named with the offending characters replaced, so the answer never echoes them.
 * Iterative: a value nested deeper than the stack goes is walked like any other.
 */
export function unstorableTextPath(value: unknown): FieldPath | null {
  const pending: Place[] = [{ value, key: null, parent: null }];
  for (let place = pending.pop(); place; place = pending.pop()) {
    const current = place.value;
    if (typeof current === 'string') {
      if (!isStorableText(current)) return pathOf(place);
    } else if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--) pending.push({ value: current[i], key: i, parent: place });
    } else if (isPlainObject(current)) {
      const entries = Object.entries(current);
      const badKey = entries.find(([key]) => !isStorableText(key));
      if (badKey) return pathOf(place, [badKey[0].replace(EVERY_UNSTORABLE, '\uFFFD')]);
      for (let i = entries.length - 1; i >= 0; i--) pending.push({ value: entries[i][1], key: entries[i][0], parent: place });
    }
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
