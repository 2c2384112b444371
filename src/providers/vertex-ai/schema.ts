/**
 * JSON Schema (what OpenAI's tools and `json_schema` carry) → Vertex AI's `Schema`, the OpenAPI subset
 * `functionDeclarations[].parameters` and `responseSchema` take. Keywords with a Vertex equivalent are
 * converted (`type: [t, "null"]` → `nullable`, `const` → a one-value `enum`); annotations Vertex has no
 * use for are left out (`$schema`, `additionalProperties: false`: Vertex answers only the listed
 * properties anyway); any other keyword is a 400 naming it, since dropping it would loosen the schema.
 */
import { invalidField, type FieldPath } from '../../errors';

type Json = Record<string, unknown>;

const TYPES: Readonly<Record<string, string>> = {
  string: 'STRING',
  number: 'NUMBER',
  integer: 'INTEGER',
  boolean: 'BOOLEAN',
  array: 'ARRAY',
  object: 'OBJECT',
};

/** Keywords copied as they are. */
const SAME = [
  'description',
  'title',
  'format',
  'enum',
  'required',
  'minItems',
  'maxItems',
  'minimum',
  'maximum',
  'minLength',
  'maxLength',
  'pattern',
  'default',
  'example',
];

/** Annotations without meaning for Vertex's answer. */
const IGNORED = new Set(['$schema', '$id', '$comment', 'examples', 'strict']);

const refuse = (path: FieldPath, keyword: string) =>
  invalidField([...path, keyword], `is a JSON Schema keyword Vertex AI's schema has no equivalent for (${keyword})`, 'unsupported_parameter');

function typeOf(value: unknown, path: FieldPath): { type?: string; nullable?: boolean } {
  const types = Array.isArray(value) ? value : [value];
  const nullable = types.includes('null');
  const rest = types.filter((t) => t !== 'null');
  if (rest.length > 1 || (rest.length === 1 && !(String(rest[0]) in TYPES))) throw refuse(path, 'type');
  return { ...(rest.length ? { type: TYPES[String(rest[0])] } : {}), ...(nullable ? { nullable: true } : {}) };
}

/** `schema` (at `path` of the request, for errors) in Vertex's terms. */
export function toVertexSchema(schema: unknown, path: FieldPath): Json {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) throw invalidField(path, 'must be a JSON Schema object');
  const out: Json = {};
  for (const [keyword, value] of Object.entries(schema as Json)) {
    if (IGNORED.has(keyword) || (keyword === 'additionalProperties' && value === false)) continue;
    if (SAME.includes(keyword)) out[keyword] = value;
    else if (keyword === 'type') Object.assign(out, typeOf(value, path));
    else if (keyword === 'nullable') out.nullable = value;
    else if (keyword === 'const') out.enum = [value];
    else if (keyword === 'items') out.items = toVertexSchema(value, [...path, 'items']);
    else if (keyword === 'anyOf' && Array.isArray(value)) out.anyOf = value.map((item, i) => toVertexSchema(item, [...path, 'anyOf', i]));
    else if (keyword === 'properties' && typeof value === 'object' && value !== null) {
      const entries = Object.entries(value as Json);
      out.properties = Object.fromEntries(entries.map(([name, item]) => [name, toVertexSchema(item, [...path, 'properties', name])]));
      // Vertex answers properties in this order (JSON Schema's order is the caller's).
      out.propertyOrdering = entries.map(([name]) => name);
    } else throw refuse(path, keyword);
  }
  return out;
}
