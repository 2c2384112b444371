/**
 * A small proto3-JSON ("protojson") request decoder for fakes of gRPC-gateway APIs (Fireworks'
 * control plane). It accepts what Go's protojson accepts and refuses the rest with protojson's own
 * wording (`proto: (line 1:2): unknown field "x"`), which is what such an API answers in a 400:
 * - a field may be named by its JSON name (`learningRate`) or its proto name (`learning_rate`);
 * - integers may be numbers or decimal strings, floats numbers or numeric strings, `null` means unset;
 * - unknown fields and wrongly typed values are errors, never silently dropped.
 * Positions are found by searching the raw text for the key, which is exact for flat bodies.
 */

export type FieldKind =
  | 'string'
  | 'bool'
  | 'int32'
  | 'int64'
  | 'double'
  /** An output-only field: accepted (it is in the message) and ignored, as the server ignores it. */
  | 'output'
  | { enum: readonly string[] }
  | { message: MessageSchema }
  | { map: 'string' | 'int64' };

/** Fields by JSON (lowerCamel) name. */
export type MessageSchema = Record<string, FieldKind>;

export class ProtoJsonError extends Error {}

const snakeCase = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** `(line L:C)` of the first `"key":` in the text (1-based, as protojson reports it). */
function position(text: string, key: string, ofValue = false): string {
  const match = new RegExp(`"${key}"\\s*:\\s*`).exec(text);
  if (!match) return '(line 1:1)';
  const at = ofValue ? match.index + match[0].length : match.index;
  const before = text.slice(0, at).split('\n');
  return `(line ${before.length}:${before.at(-1)!.length + 1})`;
}

const INT = /^-?\d+$/;
const INT32 = 2 ** 31;

function decodeScalar(kind: Exclude<FieldKind, 'output' | { message: MessageSchema } | { map: 'string' | 'int64' }>, value: unknown): unknown {
  if (kind === 'string') return typeof value === 'string' ? value : undefined;
  if (kind === 'bool') return typeof value === 'boolean' ? value : undefined;
  if (kind === 'double') {
    if (typeof value === 'number') return value;
    return typeof value === 'string' && value.trim() !== '' && !Number.isNaN(Number(value)) ? Number(value) : undefined;
  }
  if (kind === 'int32' || kind === 'int64') {
    const n = typeof value === 'number' ? value : typeof value === 'string' && INT.test(value) ? Number(value) : NaN;
    if (!Number.isInteger(n) || (kind === 'int32' && (n < -INT32 || n >= INT32))) return undefined;
    return n;
  }
  if (typeof value === 'string') return kind.enum.includes(value) ? value : undefined;
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value < kind.enum.length ? kind.enum[value] : undefined;
}

const kindName = (kind: FieldKind) => (typeof kind === 'string' ? kind : 'enum' in kind ? 'enum' : 'message');

function decodeMessage(text: string, body: Record<string, unknown>, schema: MessageSchema): Record<string, unknown> {
  const byName = new Map<string, string>();
  for (const field of Object.keys(schema)) {
    byName.set(field, field);
    byName.set(snakeCase(field), field);
  }
  const out: Record<string, unknown> = {};
  const seen = new Set<string>();
  for (const [key, value] of Object.entries(body)) {
    const field = byName.get(key);
    if (!field) throw new ProtoJsonError(`proto: ${position(text, key)}: unknown field "${key}"`);
    if (seen.has(field)) throw new ProtoJsonError(`proto: ${position(text, key)}: duplicate field "${key}"`);
    seen.add(field);
    const kind = schema[field];
    if (value === null || kind === 'output') continue;
    const invalid = () =>
      new ProtoJsonError(`proto: ${position(text, key, true)}: invalid value for ${kindName(kind)} field ${field}: ${JSON.stringify(value)}`);
    if (typeof kind === 'object' && 'message' in kind) {
      if (!value || typeof value !== 'object' || Array.isArray(value)) throw invalid();
      out[field] = decodeMessage(text, value as Record<string, unknown>, kind.message);
    } else if (typeof kind === 'object' && 'map' in kind) {
      if (!value || typeof value !== 'object' || Array.isArray(value)) throw invalid();
      const entries = Object.entries(value).map(([k, v]) => [k, decodeScalar(kind.map, v)] as const);
      if (entries.some(([, v]) => v === undefined)) throw invalid();
      out[field] = Object.fromEntries(entries);
    } else {
      const decoded = decodeScalar(kind, value);
      if (decoded === undefined) throw invalid();
      out[field] = decoded;
    }
  }
  return out;
}

/** Decodes a request body; throws a ProtoJsonError worded as protojson words it. */
export function decodeProtoJson(text: string, schema: MessageSchema): Record<string, unknown> {
  let body: unknown;
  try {
    body = JSON.parse(text.trim() === '' ? '{}' : text);
  } catch {
    throw new ProtoJsonError('proto: syntax error (line 1:1): unexpected token');
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) {
    throw new ProtoJsonError(`proto: syntax error (line 1:1): unexpected token ${text.trim().slice(0, 1)}`);
  }
  return decodeMessage(text, body as Record<string, unknown>, schema);
}
