import { buildClientSchema, getIntrospectionQuery, type IntrospectionQuery } from 'graphql';
import { api, gql, startTestGateway, useTestGateway } from '../support/gateway';

/**
 * Production mode (NODE_ENV=production), here with a tightened depth limit: the schema's own nesting
 * stays under the default of 10, so the depth limit is shown with GATEWAY_GRAPHQL_MAX_DEPTH=3.
 */
const ROUTER_SECRET = 'router-secret-0123456789abcdef';

const gw = useTestGateway({ NODE_ENV: 'production', GATEWAY_GRAPHQL_MAX_DEPTH: '3', GATEWAY_FEDERATION_SECRET: ROUTER_SECRET });
afterEach(() => jest.restoreAllMocks());

describe('GraphQL face in production mode', () => {
  it('refuses introspection', async () => {
    for (const query of [`{ __schema { types { name } } }`, `{ __type(name: "Label") { fields { name } } }`]) {
      const res = await gql(gw, query);
      expect(res.status).toBe(400);
      expect(res.body.errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
      expect(res.body.data).toBeUndefined();
    }
  });

  it('refuses the standard introspection query that tools send', async () => {
    const res = await gql(gw, getIntrospectionQuery());
    expect(res.status).toBe(400);
    expect(res.body.errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(res.body.data).toBeUndefined();
  });

  it('answers _service { sdl } to the federation router (its secret in x-gateway-federation-secret) and nobody else', async () => {
    const sdl = (secret?: string, query = `{ __typename _service { sdl } }`) =>
      api(gw, 'POST', '/graphql', { body: { query }, headers: secret === undefined ? {} : { 'x-gateway-federation-secret': secret } });
    const router = await sdl(ROUTER_SECRET);
    expect(router.status).toBe(200);
    expect(router.body.data.__typename).toBe('Query');
    expect(router.body.data._service.sdl).toContain('@key(fields: "id")');
    for (const refused of [await sdl(), await sdl('wrong'), await sdl(ROUTER_SECRET.slice(0, -1)), await sdl(undefined, `{ s: _service { sdl } }`)]) {
      expect(refused.status).toBe(403);
      expect(refused.body.errors[0]).toMatchObject({ message: expect.stringMatching(/x-gateway-federation-secret/), extensions: { code: 'FORBIDDEN' } });
      expect(JSON.stringify(refused.body)).not.toContain('@key');
    }
    // Behind a fragment, too.
    const fragment = await sdl(undefined, `query { ...Q } fragment Q on Query { _service { sdl } }`);
    expect(fragment.status).toBe(403);
    expect((await gql(gw, `{ __typename }`)).body.data.__typename).toBe('Query');
  });

  it('serves _service to nobody in production without a configured secret', async () => {
    const open = await startTestGateway({ NODE_ENV: 'production' });
    try {
      const res = await gql(open, `{ _service { sdl } }`);
      expect(res.status).toBe(403);
      expect(res.body.errors[0]).toMatchObject({
        message: '_service is not served in production without GATEWAY_FEDERATION_SECRET',
        extensions: { code: 'FORBIDDEN' },
      });
    } finally {
      await open.stop();
    }
  });

  it('hides field and enum suggestions', async () => {
    const res = await gql(gw, `{ labels { totl } }`);
    expect(res.status).toBe(400);
    expect(res.body.errors[0].message).toBe('Cannot query field "totl" on type "LabelPage".');
    expect(JSON.stringify(res.body)).not.toMatch(/Did you mean/);
    // Enum values named in a variable are coerced outside validation: formatError drops the hint.
    const variable = await gql(gw, `mutation($f: Upload!, $p: FilePurpose!) { uploadFile(file: $f, purpose: $p) { id } }`, { f: null, p: 'FINE_TUN' });
    expect(variable.status).toBe(400);
    expect(variable.body.errors.map((e: { message: string }) => e.message)).toContainEqual(expect.stringMatching(/"FINE_TUN" does not exist/));
    expect(JSON.stringify(variable.body)).not.toMatch(/Did you mean|FINE_TUNE/);
  });

  it('shows a browser a short page saying what the endpoint is (no Sandbox, no raw CSRF error)', async () => {
    const res = await fetch(`${gw.url}/graphql`, { headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await res.text();
    expect(html).toContain('POST /graphql');
    expect(html).toContain('href="/console/explorer.html"');
    expect(html).not.toMatch(/sandbox|csrf|"errors"|(src|href)="https?:/i);
    expect(html.length).toBeLessThan(2000);
  });

  it('refuses queries deeper than the configured limit before any resolver runs', async () => {
    // labels (1) → items (2) → id (3) is allowed; a fourth level is not.
    expect((await gql(gw, `{ labels { items { id } } }`)).body.errors).toBeUndefined();
    const list = jest.spyOn(gw.gateway.services.fineTuning, 'list');
    const res = await gql(gw, `{ fineTuningJobs { items { trainingFile { id } } } }`);
    expect(res.status).toBe(400);
    expect(res.body.errors[0]).toMatchObject({
      message: 'Query depth 4 exceeds the limit of 3',
      extensions: { code: 'QUERY_TOO_DEEP', depth: 4, maxDepth: 3 },
    });
    expect(list).not.toHaveBeenCalled();
  });
});

describe('GraphQL face outside production (the contrast)', () => {
  const dev = useTestGateway();

  it('serves introspection, and a browser an HTML page (the explorer: test/console/console.routes.test.ts)', async () => {
    const res = await gql(dev, `{ __type(name: "Label") { name } }`);
    expect(res.body.data.__type.name).toBe('Label');
    const page = await fetch(`${dev.url}/graphql`, { headers: { accept: 'text/html' } });
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    expect(await page.text()).not.toMatch(/(src|href)="https?:/);
  });

  // What Apollo Sandbox, GraphiQL, graphql-codegen, Rover and IDE plugins send: not held to the cost limit.
  it.each([
    ['without options', {}],
    [
      'with every option',
      { descriptions: true, specifiedByUrl: true, directiveIsRepeatable: true, schemaDescription: true, inputValueDeprecation: true, oneOf: true },
    ],
  ])('answers the standard introspection query %s, and buildClientSchema accepts the answer', async (_name, options) => {
    const res = await gql(dev, getIntrospectionQuery(options));
    expect(res.body.errors).toBeUndefined();
    expect(res.status).toBe(200);
    const schema = buildClientSchema(res.body.data as IntrospectionQuery);
    expect(schema.getQueryType()?.getFields().labels).toBeDefined();
  });

  it('keeps the cost limit on real fields asked next to introspection', async () => {
    const res = await gql(dev, `{ __schema { types { name } } fineTuningJobs(limit: 100) { items { id events(limit: 100) { id } } } }`);
    expect(res.status).toBe(400);
    expect(res.body.errors[0].extensions).toMatchObject({ code: 'QUERY_TOO_COMPLEX', cost: 10_101 });
  });
});
