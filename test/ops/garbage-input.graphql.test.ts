/**
 * Every argument of every GraphQL root field that carries text, fed text Postgres cannot store (NUL,
 * unpaired UTF-16 surrogates) as a variable and as a literal: each is BAD_USER_INPUT naming the
 * argument's path, before any resolver runs, never an internal error. The fields come from the
 * served schema itself (its standard introspection), so a new field is covered without an edit here.
 */
import {
  buildClientSchema,
  getIntrospectionQuery,
  getNamedType,
  isCompositeType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isScalarType,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLSchema,
  type IntrospectionQuery,
} from 'graphql';
import { gql, startTestGateway, type TestGateway } from '../support/gateway';

let gw: TestGateway;
let schema: GraphQLSchema;
beforeAll(async () => {
  gw = await startTestGateway();
  schema = buildClientSchema((await gql(gw, getIntrospectionQuery())).body.data as IntrospectionQuery);
});
afterAll(() => gw.stop());

/** Scalars that carry strings, and those whose values are JSON objects (their strings are data too). */
const STRING_SCALARS = new Set(['String', 'ID', 'DateTimeISO']);
const OBJECT_SCALARS = new Set(['JSON', 'JSONObject', '_Any']);

/** A value of `type` with `text` at its first text-carrying place, and that place's path; null when it carries no text. */
function withText(type: GraphQLInputType, text: string): { value: unknown; path: (string | number)[] } | null {
  if (isNonNullType(type)) return withText(type.ofType, text);
  if (isListType(type)) {
    const inner = withText(type.ofType, text);
    return inner && { value: [inner.value], path: [0, ...inner.path] };
  }
  if (isScalarType(type)) {
    if (STRING_SCALARS.has(type.name)) return { value: text, path: [] };
    if (OBJECT_SCALARS.has(type.name)) return { value: { text }, path: ['text'] };
    return null;
  }
  if (isInputObjectType(type)) {
    for (const field of Object.values(type.getFields())) {
      const inner = withText(field.type, text);
      if (inner) return { value: { ...(dummy(type) as object), [field.name]: inner.value }, path: [field.name, ...inner.path] };
    }
  }
  return null;
}

/** A valid-looking value of `type`, for the arguments and input fields a case does not aim at. */
function dummy(type: GraphQLInputType): unknown {
  if (isNonNullType(type)) return dummy(type.ofType);
  if (isListType(type)) return [];
  if (isEnumType(type)) return type.getValues()[0].value;
  if (isInputObjectType(type)) {
    const out: Record<string, unknown> = {};
    for (const field of Object.values(type.getFields())) if (isNonNullType(field.type)) out[field.name] = dummy(field.type);
    return out;
  }
  if (STRING_SCALARS.has(type.name)) return type.name === 'DateTimeISO' ? '2026-01-01T00:00:00.000Z' : 'x';
  if (OBJECT_SCALARS.has(type.name)) return {};
  return type.name === 'Boolean' ? true : 1;
}

/** A value as a GraphQL literal (JSON's string escapes are GraphQL's too). */
function literal(value: unknown, type: GraphQLInputType): string {
  const nullable = isNonNullType(type) ? type.ofType : type;
  if (Array.isArray(value)) return `[${value.map((v) => literal(v, isListType(nullable) ? nullable.ofType : nullable)).join(', ')}]`;
  if (isEnumType(nullable) && typeof value === 'string') return value;
  if (value !== null && typeof value === 'object') {
    const fields = isInputObjectType(nullable) ? nullable.getFields() : {};
    return `{${Object.entries(value)
      .map(([k, v]) => `${k}: ${literal(v, fields[k]?.type ?? nullable)}`)
      .join(', ')}}`;
  }
  return JSON.stringify(value);
}

interface FieldCase {
  operation: 'query' | 'mutation';
  field: GraphQLField<unknown, unknown>;
  target: GraphQLArgument;
}

function fieldCases(): FieldCase[] {
  const cases: FieldCase[] = [];
  for (const operation of ['query', 'mutation'] as const) {
    const root = operation === 'query' ? schema.getQueryType() : schema.getMutationType();
    for (const field of Object.values(root?.getFields() ?? {})) {
      for (const target of field.args) if (withText(target.type, 'x')) cases.push({ operation, field, target });
    }
  }
  return cases;
}

/** The operation asking for `field`, its arguments as variables or literals. */
function operationOf(c: FieldCase, text: string, as: 'variables' | 'literals'): { query: string; variables: Record<string, unknown>; param: string } | null {
  const aimed = withText(c.target.type, text)!;
  const values = new Map(c.field.args.filter((a) => a === c.target || isNonNullType(a.type)).map((a) => [a, a === c.target ? aimed.value : dummy(a.type)]));
  const selection = isCompositeType(getNamedType(c.field.type)) ? ' { __typename }' : '';
  const param = [c.target.name, ...aimed.path].join('.');
  if (as === 'variables') {
    const declared = [...values.keys()].map((a) => `$${a.name}: ${String(a.type)}`).join(', ');
    const args = [...values.keys()].map((a) => `${a.name}: $${a.name}`).join(', ');
    return {
      query: `${c.operation}(${declared}) { ${c.field.name}(${args})${selection} }`,
      variables: Object.fromEntries([...values].map(([a, v]) => [a.name, v])),
      param,
    };
  }
  // An upload cannot be written as a literal.
  if ([...values.keys()].some((a) => getNamedType(a.type).name === 'Upload')) return null;
  const args = [...values].map(([a, v]) => `${a.name}: ${literal(v, a.type)}`).join(', ');
  return { query: `${c.operation} { ${c.field.name}(${args})${selection} }`, variables: {}, param };
}

const TEXTS = [
  ['NUL', 'a\u0000b'],
  ['a lone high surrogate', '\ud800'],
  ['a lone low surrogate', 'x\udc00'],
] as const;

describe('unstorable text in every GraphQL argument that carries text', () => {
  it('covers the root fields that take text (labels, partials, files, jobs, integrations, entities…)', () => {
    const names = fieldCases().map((c) => c.field.name);
    expect(names).toEqual(expect.arrayContaining(['labels', 'createLabel', 'promptPartial', 'createPromptPartial', 'fineTuningJob', '_entities']));
  });

  it('refuses it as BAD_USER_INPUT naming the argument, for each field, as a variable and as a literal', async () => {
    const failures: string[] = [];
    for (const c of fieldCases()) {
      for (const [what, text] of TEXTS) {
        for (const as of ['variables', 'literals'] as const) {
          // GraphQL's lexer refuses a lone surrogate's escape itself (a parse error, 400).
          if (as === 'literals' && what !== 'NUL') continue;
          const op = operationOf(c, text, as);
          if (!op) continue;
          const res = await gql(gw, op.query, op.variables);
          const error = res.body.errors?.[0];
          const ok =
            res.status === 400 &&
            res.body.data === undefined &&
            error?.extensions?.code === 'BAD_USER_INPUT' &&
            error.extensions.param === op.param &&
            error.extensions.errorCode === 'invalid_text';
          if (!ok) failures.push(`${c.field.name}(${c.target.name}) ${what} as ${as}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
        }
      }
    }
    expect(failures).toEqual([]);
  });

  it('refuses a lone surrogate written in a literal as a parse error (400), never an internal error', async () => {
    const res = await gql(gw, 'query { promptPartial(idOrSlug: "\\ud800") { id } }');
    expect(res.status).toBe(400);
    expect(res.body.errors[0].extensions.code).toMatch(/GRAPHQL_PARSE_FAILED|BAD_USER_INPUT/);
  });
});
