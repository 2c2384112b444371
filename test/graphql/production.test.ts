import { gql, startTestGateway, type TestGateway } from '../support/gateway';

/**
 * Production mode (NODE_ENV=production), here with a tightened depth limit: the schema's own nesting
 * stays under the default of 10, so the depth limit is shown with GATEWAY_GRAPHQL_MAX_DEPTH=3.
 */
let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway({ NODE_ENV: 'production', GATEWAY_GRAPHQL_MAX_DEPTH: '3' });
});
afterAll(() => gw.stop());
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

  it('still answers _service { sdl } (a router needs it) and __typename', async () => {
    const res = await gql(gw, `{ __typename _service { sdl } }`);
    expect(res.status).toBe(200);
    expect(res.body.data.__typename).toBe('Query');
    expect(res.body.data._service.sdl).toContain('@key(fields: "id")');
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

  it('serves no landing page (Sandbox)', async () => {
    const res = await fetch(`${gw.url}/graphql`, { headers: { accept: 'text/html' } });
    expect(res.headers.get('content-type') ?? '').not.toMatch(/text\/html/);
    expect(await res.text()).not.toMatch(/<html|sandbox/i);
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
  let dev: TestGateway;
  beforeAll(async () => {
    dev = await startTestGateway();
  });
  afterAll(() => dev.stop());

  it('serves introspection and the Sandbox landing page', async () => {
    const res = await gql(dev, `{ __type(name: "Label") { name } }`);
    expect(res.body.data.__type.name).toBe('Label');
    const page = await fetch(`${dev.url}/graphql`, { headers: { accept: 'text/html' } });
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
  });
});
