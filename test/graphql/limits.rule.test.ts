import { buildSchema, parse, validate, specifiedRules, Kind, type OperationDefinitionNode } from 'graphql';
import { loadConfig } from '../../src/config';
import { costOf } from '../../src/graphql/cost';
import { measureOperation, queryLimitsRule, QueryLimitError, type QueryLimits } from '../../src/graphql/limits';
import { buildServedSchema } from '../../src/graphql/schema';
import { GRAPHQL_MODULES } from '../../src/modules/graphql-modules';

/** A recursive schema: the gateway's own has no cycles, so depth bombs are built here. */
const schema = buildSchema(`
  type Query {
    node: Node
    nodes(pageSize: Int, page: Int): NodePage!
    things(limit: Int): [Node!]!
    all: [Node!]!
  }
  type NodePage { total: Int! items: [Node!]! }
  type Node {
    id: ID!
    name: String!
    tags: [String!]!
    child: Node
    children(limit: Int): [Node!]!
  }
`);

const limits: QueryLimits = loadConfig({}).graphqlLimits;

function errors(query: string, custom: Partial<QueryLimits> = {}) {
  return validate(schema, parse(query), [...specifiedRules, queryLimitsRule({ ...limits, ...custom })]).map((e) => ({
    code: e.extensions.code,
    message: e.message,
  }));
}

function measure(query: string) {
  const document = parse(query);
  const operation = document.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  if (!operation) throw new Error('no operation');
  const fragments = new Map(document.definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d] as const] : [])));
  return measureOperation(schema, operation, (name) => fragments.get(name), limits);
}

/** The cost of a query on the gateway's served schema, whose fields declare their cost. */
async function cost(query: string, variables: Record<string, unknown> = {}) {
  return costOf(await buildServedSchema(GRAPHQL_MODULES), parse(query), variables, undefined, limits.defaultListSize);
}

/** `{ node { child { … id } } }`, `depth` fields deep. */
const nested = (depth: number) => `{ node { ${'child { '.repeat(depth - 2)}id ${'} '.repeat(depth - 2)}} }`;

describe('query limits rule', () => {
  it('has the documented defaults', () => {
    expect(limits).toEqual({ maxDepth: 10, maxAliases: 15, maxDirectives: 10, maxTokens: 5000, maxCost: 10_000, maxPageSize: 100, defaultListSize: 50 });
  });

  it('refuses a query deeper than maxDepth (leaves count), through fragments too', () => {
    expect(measure(nested(10)).depth).toBe(10);
    expect(errors(nested(10))).toEqual([]);
    expect(errors(nested(11))).toEqual([{ code: 'QUERY_TOO_DEEP', message: 'Query depth 11 exceeds the limit of 10' }]);
    const viaFragments = `{ node { ...A } } fragment A on Node { child { ...B } } fragment B on Node { child { child { child { child { child { child { child { child { id } } } } } } } } }`;
    expect(errors(viaFragments)).toEqual([{ code: 'QUERY_TOO_DEEP', message: 'Query depth 11 exceeds the limit of 10' }]);
  });

  it('counts aliases and directives, fragments expanded', () => {
    const aliases = (n: number) => `{ ${Array.from({ length: n }, (_, i) => `a${i}: node { id }`).join(' ')} }`;
    expect(errors(aliases(15))).toEqual([]);
    expect(errors(aliases(16))[0]?.code).toBe('TOO_MANY_ALIASES');
    expect(errors(`{ ${Array.from({ length: 16 }, (_, i) => `t${i}: __typename`).join(' ')} }`)[0]?.code).toBe('TOO_MANY_ALIASES');
    const twice = `{ node { ...F ...F } } fragment F on Node { a: id b: name c: id d: name e: id f: name g: id h: name }`;
    expect(measure(twice).aliases).toBe(16);
    const directives = (n: number) => `{ node { ${Array.from({ length: n }, () => `__typename @include(if: true)`).join(' ')} } }`;
    expect(errors(directives(10))).toEqual([]);
    expect(errors(directives(11))[0]?.code).toBe('TOO_MANY_DIRECTIVES');
  });

  it('costs objects 1 and lists by the page size their field declares', async () => {
    expect(await cost(`{ label(id: "x") { id name } }`)).toBe(1);
    // A page field's size applies to the items inside the page object.
    expect(await cost(`{ labels(pageSize: 20) { total items { id } } }`)).toBe(1 + 20);
    expect(await cost(`{ fineTuningJobs(limit: 7) { items { id } } }`)).toBe(1 + 7);
    // No size: the field's own default; a variable counts once it is known.
    expect(await cost(`{ labels { items { id } } }`)).toBe(1 + 50);
    expect(await cost(`query($n: Int) { fineTuningJobs(limit: $n) { items { id } } }`, { n: 3 })).toBe(1 + 3);
    // Nested lists multiply; leaves are free.
    expect(await cost(`{ fineTuningJobs(limit: 10) { items { id events(limit: 10) { id message } } } }`)).toBe(1 + 10 * (1 + 10));
    expect(await cost(`{ promptPartials { id versions { id } } }`)).toBe(50 * (1 + 50));
  });

  it('refuses literal page sizes over the cap with BAD_USER_INPUT and the argument as param', () => {
    const found = validate(schema, parse(`{ things(limit: 1000) { id } }`), [queryLimitsRule(limits)]);
    expect(found).toHaveLength(1);
    expect(found[0]).toBeInstanceOf(QueryLimitError);
    expect(found[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', param: 'limit' });
  });

  it('measures fragment fan-out without exponential work', () => {
    // Each fragment spreads the next twice: 2^40 expanded fields, measured through the memo.
    const fragments = Array.from({ length: 40 }, (_, i) => `fragment F${i} on Node { ...F${i + 1} ...F${i + 1} }`).join('\n');
    const query = `{ node { ...F0 } }\n${fragments}\nfragment F40 on Node { id }`;
    const started = Date.now();
    expect(measure(query).depth).toBe(2);
    expect(Date.now() - started).toBeLessThan(1000);
  });
});
