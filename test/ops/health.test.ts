import { api, startTestGateway, type TestGateway } from '../support/gateway';

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(() => gw.stop());

describe('operations endpoints', () => {
  it('serves /healthz, /readyz and /metrics without a key', async () => {
    expect(await api(gw, 'GET', '/healthz', { key: null })).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect(await api(gw, 'GET', '/readyz', { key: null })).toMatchObject({ status: 200, body: { status: 'ready' } });
    await api(gw, 'GET', '/v1/labels');
    const metrics = await api(gw, 'GET', '/metrics', { key: null });
    expect(metrics.status).toBe(200);
    expect(metrics.body).toMatch(/gateway_http_requests_total\{method="GET",status="200"\} \d+/);
  });

  it('answers unknown routes with 404 in the error shape', async () => {
    const res = await api(gw, 'GET', '/v1/nothing-here');
    expect(res.status).toBe(404);
    expect(res.body.error).toMatchObject({ type: 'not_found_error' });
  });

  it('serves the Apollo Sandbox landing page outside production', async () => {
    const res = await fetch(`${gw.url}/graphql`, { headers: { accept: 'text/html' } });
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/apollo/i);
  });
});

describe('production mode', () => {
  let prod: TestGateway;
  beforeAll(async () => {
    prod = await startTestGateway({ NODE_ENV: 'production' });
  });
  afterAll(() => prod.stop());

  it('has no Sandbox and no introspection', async () => {
    const page = await fetch(`${prod.url}/graphql`, { headers: { accept: 'text/html' } });
    expect(await page.text()).not.toMatch(/sandbox/i);
    const res = await api(prod, 'POST', '/graphql', { body: { query: '{ __schema { types { name } } }' } });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
  });
});
