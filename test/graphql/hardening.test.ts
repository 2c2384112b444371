import { api, gql, startTestGateway, stopBackgroundWork, type TestGateway } from '../support/gateway';

/**
 * The query limits and HTTP hardening of the GraphQL face against the live server (default limits).
 * "Refused before any resolver runs" is shown twice: the service a resolver would call is spied on,
 * and no SQL statement touches a domain table (authentication's own statements aside).
 */
const AUTH_TABLES = /"(api_keys|workspaces|organisations)"/;

let gw: TestGateway;
let domainStatements = 0;

beforeAll(async () => {
  gw = await startTestGateway({}, { onQuery: (sql) => (domainStatements += AUTH_TABLES.test(sql) ? 0 : 1) });
  // Background polling and pruning would show up in the statement count.
  await stopBackgroundWork(gw);
});
afterAll(() => gw.stop());
afterEach(() => jest.restoreAllMocks());

/** Runs `send` and expects that it reached no resolver: no domain SQL and none of the given spies called. */
async function refusedBeforeResolvers<T>(send: () => Promise<T>, spies: jest.SpyInstance[]): Promise<T> {
  const before = domainStatements;
  const result = await send();
  expect(domainStatements - before).toBe(0);
  for (const spy of spies) expect(spy).not.toHaveBeenCalled();
  return result;
}

describe('GraphQL query limits (before any resolver runs)', () => {
  it('refuses more than 15 aliases with TOO_MANY_ALIASES', async () => {
    const list = jest.spyOn(gw.gateway.services.labels, 'list');
    const query = `{ ${Array.from({ length: 16 }, (_, i) => `a${i}: labels { total }`).join(' ')} }`;
    const res = await refusedBeforeResolvers(() => gql(gw, query), [list]);
    expect(res.status).toBe(400);
    expect(res.body.data).toBeUndefined();
    expect(res.body.errors).toEqual([
      expect.objectContaining({
        message: 'Query uses 16 aliases, more than the limit of 15',
        extensions: { code: 'TOO_MANY_ALIASES', aliases: 16, maxAliases: 15 },
      }),
    ]);
    // 15 are fine.
    const ok = await gql(gw, `{ ${Array.from({ length: 15 }, (_, i) => `a${i}: labels { total }`).join(' ')} }`);
    expect(ok.body.errors).toBeUndefined();
  });

  it('refuses a query whose list fields cost more than 10 000 with QUERY_TOO_COMPLEX', async () => {
    const list = jest.spyOn(gw.gateway.services.fineTuning, 'list');
    const events = jest.spyOn(gw.gateway.services.fineTuning, 'latestEvents');
    // 100 jobs × (1 + 100 events) = 10 101.
    const query = `{ fineTuningJobs(limit: 100) { items { id events(limit: 100) { id message } } } }`;
    const res = await refusedBeforeResolvers(() => gql(gw, query), [list, events]);
    expect(res.status).toBe(400);
    expect(res.body.errors[0]).toMatchObject({ extensions: { code: 'QUERY_TOO_COMPLEX', cost: 10_101, maxCost: 10_000 } });
    // Aliases multiply the cost too: 4 × 50 partials × (1 + 50 versions) = 10 200.
    const partials = jest.spyOn(gw.gateway.services.partials, 'list');
    const aliased = `{ ${Array.from({ length: 4 }, (_, i) => `p${i}: promptPartials { versions { id } }`).join(' ')} }`;
    const bomb = await refusedBeforeResolvers(() => gql(gw, aliased), [partials]);
    expect(bomb.body.errors[0].extensions.code).toBe('QUERY_TOO_COMPLEX');
  });

  it('refuses page sizes over 100 in the query with BAD_USER_INPUT', async () => {
    const list = jest.spyOn(gw.gateway.services.labels, 'list');
    const res = await refusedBeforeResolvers(() => gql(gw, `{ labels(pageSize: 1000) { total } }`), [list]);
    expect(res.status).toBe(400);
    expect(res.body.errors[0]).toMatchObject({ message: 'pageSize must be at most 100 (got 1000)', extensions: { code: 'BAD_USER_INPUT', param: 'pageSize' } });
    // Through a variable, the service's own validation answers (also before any SQL).
    const viaVariable = await refusedBeforeResolvers(() => gql(gw, `query($n: Int) { labels(pageSize: $n) { total } }`, { n: 101 }), []);
    expect(viaVariable.body.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', param: 'pageSize' });
  });

  it('refuses more than 10 directives with TOO_MANY_DIRECTIVES', async () => {
    const list = jest.spyOn(gw.gateway.services.labels, 'list');
    const query = `{ labels { ${Array.from({ length: 11 }, () => 'total @include(if: true)').join(' ')} } }`;
    const res = await refusedBeforeResolvers(() => gql(gw, query), [list]);
    expect(res.status).toBe(400);
    expect(res.body.errors[0].extensions.code).toBe('TOO_MANY_DIRECTIVES');
  });

  it('refuses documents of more than 5 000 tokens with QUERY_TOO_LARGE', async () => {
    const list = jest.spyOn(gw.gateway.services.labels, 'list');
    const query = `{ labels { ${'__typename '.repeat(5000)} } }`;
    const res = await refusedBeforeResolvers(() => gql(gw, query), [list]);
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ message: 'Query has more than 5000 tokens', extensions: { code: 'QUERY_TOO_LARGE', maxTokens: 5000 } }]);
  });

  it('refuses _entities whose representations cost too much, once the variables are known', async () => {
    const findMany = jest.spyOn(gw.gateway.services.partials, 'findMany');
    const representations = Array.from({ length: 200 }, () => ({ __typename: 'PromptPartial', id: '3f9a1c52-8d0e-4b7a-9c61-2a5e8f7d4b10' }));
    const query = `query($r: [_Any!]!) { _entities(representations: $r) { ... on PromptPartial { id versions { id } } } }`;
    const res = await refusedBeforeResolvers(() => gql(gw, query, { r: representations }), [findMany]);
    expect(res.status).toBe(400);
    expect(res.body.errors[0].extensions).toMatchObject({ code: 'QUERY_TOO_COMPLEX', cost: 200 * 51 });
  });
});

describe('GraphQL HTTP hardening', () => {
  it('refuses batched requests with 400', async () => {
    const list = jest.spyOn(gw.gateway.services.labels, 'list');
    const res = await refusedBeforeResolvers(
      () => api(gw, 'POST', '/graphql', { body: [{ query: '{ labels { total } }' }, { query: '{ labels { total } }' }] }),
      [list],
    );
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toMatch(/batch/i);
  });

  it('runs GET queries only with a CSRF preflight header, and never mutations', async () => {
    const get = (query: string, headers: Record<string, string> = {}) =>
      fetch(`${gw.url}/graphql?query=${encodeURIComponent(query)}`, { headers: { 'x-gateway-api-key': gw.key, ...headers } });
    expect((await get('{ labels { total } }')).status).toBe(400);
    const ok = await get('{ labels { total } }', { 'apollo-require-preflight': 'true' });
    expect(ok.status).toBe(200);
    expect((await ok.json()).data.labels.total).toBeGreaterThan(0);
    const create = jest.spyOn(gw.gateway.services.labels, 'create');
    const mutation = await get('mutation { createLabel(input: {name: "via-get"}) { id } }', { 'apollo-require-preflight': 'true' });
    expect(mutation.status).toBe(405);
    expect(create).not.toHaveBeenCalled();
  });

  it('refuses JSON bodies over 1 MB with 413 PAYLOAD_TOO_LARGE', async () => {
    const res = await api(gw, 'POST', '/graphql', { body: { query: '{ labels { total } }', variables: { padding: 'x'.repeat(1024 * 1024) } } });
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ errors: [{ message: 'Request body larger than 1mb', extensions: { code: 'PAYLOAD_TOO_LARGE' } }] });
  });

  it('answers malformed JSON with 400, in the GraphQL error shape', async () => {
    const res = await api(gw, 'POST', '/graphql', { rawBody: '{"query": "{ labels { total } }"', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].extensions.code).toBe('BAD_REQUEST');
  });

  it('masks unexpected errors and never sends stack traces', async () => {
    jest.spyOn(gw.gateway.services.labels, 'list').mockRejectedValue(new Error('connection string postgres://secret@db'));
    const res = await gql(gw, `{ labels { total } }`);
    expect(res.body.errors).toEqual([
      expect.objectContaining({ message: 'Internal server error', extensions: expect.objectContaining({ code: 'INTERNAL_SERVER_ERROR' }) }),
    ]);
    expect(JSON.stringify(res.body)).not.toMatch(/secret|stacktrace|at .*\.ts:\d+/);
    const validation = await gql(gw, `{ labels { nope } }`);
    expect(validation.body.errors[0].extensions).toEqual({ code: 'GRAPHQL_VALIDATION_FAILED' });
  });

  it('answers wrong variable types and unknown arguments with 400-class errors, never 500', async () => {
    const cases: [string, Record<string, unknown>][] = [
      [`query($id: ID!) { label(id: $id) { id } }`, {}],
      [`query($id: ID!) { label(id: $id) { id } }`, { id: { nested: true } }],
      [`query($p: Int) { labels(pageSize: $p) { total } }`, { p: 2 ** 40 }],
      [`{ labels(nope: 1) { total } }`, {}],
      [`{ label { id } }`, {}],
      [`query { labels { total } } query { labels { total } }`, {}],
      [`mutation { labels { total } }`, {}],
      [`subscription { labels { total } }`, {}],
    ];
    for (const [query, variables] of cases) {
      const res = await gql(gw, query, variables);
      expect({ query, status: res.status }).toEqual({ query, status: 400 });
      expect(res.body.errors.length).toBeGreaterThan(0);
    }
  });

  it('shows field suggestions outside production (production hides them: production.test.ts)', async () => {
    const res = await gql(gw, `{ labels { totl } }`);
    expect(res.body.errors[0].message).toMatch(/Did you mean "total"\?/);
  });
});
