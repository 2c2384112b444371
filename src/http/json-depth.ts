import type { IncomingMessage } from 'node:http';

/**
 * JSON nested thousands deep parses fine (V8's JSON.parse does not recurse), but every recursive walk
 * after it (REST's key conversion, graphql-js's variable coercion, JSON.stringify) overflows the stack.
 * Bodies are refused beyond `GATEWAY_JSON_MAX_DEPTH` before they are parsed.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;

/**
 * Whether JSON text (UTF-8 bytes) nests objects and arrays deeper than `max`. One pass without
 * recursion or allocation; strings are jumped over with `indexOf` (native), so long text costs little.
 * Malformed text gives some answer and is then refused by the parser anyway.
 */
export function jsonTooDeep(bytes: Uint8Array, max: number): boolean {
  let depth = 0;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i];
    if (c === QUOTE) {
      i = closingQuote(bytes, i + 1);
      if (i < 0) return false;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > max) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}

/** The index of the quote closing a string that starts at `from`, or -1: a quote after an odd run of backslashes is escaped. */
function closingQuote(bytes: Uint8Array, from: number): number {
  for (let at = from; ; at++) {
    at = bytes.indexOf(QUOTE, at);
    if (at < 0) return -1;
    let backslashes = 0;
    while (bytes[at - 1 - backslashes] === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return at;
  }
}

/** Whether a parsed value (a multipart request's JSON field) nests deeper than `max`; an explicit stack, no recursion. */
export function valueTooDeep(value: unknown, max: number): boolean {
  const stack: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    if (next.value === null || typeof next.value !== 'object') continue;
    if (next.depth + 1 > max) return true;
    for (const item of Object.values(next.value)) stack.push({ value: item, depth: next.depth + 1 });
  }
  return false;
}

/** The `type` of the error `refuseDeepJson` raises, as body-parser types its own (`entity.too.large`…). */
export const JSON_TOO_DEEP = 'entity.too.deep';

/**
 * A body-parser style error (`status`, `type`, `expose`), which each face maps to its error shape
 * like the parser's own. Not a GatewayError: body-parser writes `type` onto what `verify` throws.
 */
export function jsonTooDeepError(max: number): Error & { status: number; type: string; expose: boolean } {
  return Object.assign(new Error(`The JSON body is nested more than ${max} levels deep`), { status: 400, type: JSON_TOO_DEEP, expose: true });
}

/**
 * express.json()'s `verify` hook: runs on the raw body before it is parsed. Bodies are UTF-8 almost
 * always; another `utf-*` charset body-parser accepts is decoded first so the scan sees characters,
 * not bytes of UTF-16 code units.
 */
export function refuseDeepJson(max: number): (req: IncomingMessage, res: unknown, body: Buffer, encoding: string) => void {
  return (_req, _res, body, encoding) => {
    const bytes = /^utf-?8$/i.test(encoding) ? body : Buffer.from(decode(body, encoding));
    if (jsonTooDeep(bytes, max)) throw jsonTooDeepError(max);
  };
}

/** UTF-16 through the platform's decoder; a charset it does not know (UTF-7, UTF-32) is refused as unsupported. */
function decode(body: Buffer, encoding: string): string {
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(encoding);
  } catch {
    throw Object.assign(new Error(`JSON bodies must be UTF-8 or UTF-16, not ${encoding}`), { status: 415, type: 'charset.unsupported', expose: true });
  }
  return decoder.decode(body);
}
