/**
 * Credentials out of what providers answer. Providers sometimes echo a key back, in an error message
 * or inside an object they return (a file name, a job's error), so the credentials a call used are
 * replaced by `[redacted]` in everything the gateway reads from the answer: error messages, and every
 * string (keys included) of a JSON answer or an SDK's parsed output. Streamed content (file bytes, a
 * streamed chat completion) is the caller's data passed through as it is, and not looked at.
 */

const REDACTED = '[redacted]';
/** Shorter values would match ordinary text (and are no credential of any provider). */
const MIN_SECRET_LENGTH = 4;

const usable = (secrets: readonly string[]) => secrets.filter((s) => s.length >= MIN_SECRET_LENGTH);

function scrub(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  return out;
}

/** `text` with every credential replaced. */
export const redactText = (text: string, secrets: readonly string[] = []): string => scrub(text, usable(secrets));

/** Data, as JSON.parse and the SDKs' deserialisers make it; an object with symbol keys is a behaviour (an async iterable). */
const isPlainObject = (value: unknown): value is Record<string, unknown> => {
  if (typeof value !== 'object' || value === null) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return (proto === Object.prototype || proto === null) && Object.getOwnPropertySymbols(value).length === 0;
};

function walk(value: unknown, secrets: readonly string[]): unknown {
  if (typeof value === 'string') return scrub(value, secrets);
  if (Array.isArray(value)) return value.map((item) => walk(item, secrets));
  if (!isPlainObject(value)) return value; // a stream, a Date, bytes: not text the provider wrote
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) out[scrub(key, secrets)] = walk(item, secrets);
  return out;
}

/** A parsed answer (JSON, or an SDK's output) with every string scrubbed; other values are kept as they are. */
export function redactValue<T>(value: T, secrets: readonly string[] = []): T {
  const active = usable(secrets);
  return active.length ? (walk(value, active) as T) : value;
}

/**
 * The parsed JSON of `text`, scrubbed. A JSON string differs from its text only through escapes, so
 * an answer with neither a credential nor a backslash in its text is returned without a walk.
 */
export function redactJson(text: string, parsed: unknown, secrets: readonly string[] = []): unknown {
  const active = usable(secrets);
  if (!active.length || (!text.includes('\\') && !active.some((s) => text.includes(s)))) return parsed;
  return walk(parsed, active);
}
