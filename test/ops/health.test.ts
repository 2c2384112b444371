import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config';
import { createLogger } from '../../src/logger';
import { startGateway, type RunningGateway } from '../../src/main';
import { gatewayFetch } from '../support/answers';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { api, startTestGateway, useTestGateway } from '../support/gateway';

const gw = useTestGateway();

describe('operations endpoints', () => {
  it('serves /healthz, /readyz and /metrics without a key', async () => {
    expect(await api(gw, 'GET', '/healthz', { key: null })).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect(await api(gw, 'GET', '/readyz', { key: null })).toMatchObject({ status: 200, body: { status: 'ready' } });
    await api(gw, 'GET', '/v1/labels');
    const metrics = await api(gw, 'GET', '/metrics', { key: null });
    expect(metrics.status).toBe(200);
    expect(metrics.body).toMatch(/gateway_http_requests_total\{method="GET",status="200"\} \d+/);
  });

  it('exposes per-route latency histograms and job counts by status on /metrics', async () => {
    const label = (await api(gw, 'GET', '/v1/labels')).body.data[0];
    await api(gw, 'GET', `/v1/labels/${label.id}`);
    await api(gw, 'GET', '/v1/labels/00000000-0000-4000-8000-000000000000');
    const metrics = (await api(gw, 'GET', '/metrics', { key: null })).body as string;
    // The route pattern, never the id: label values stay bounded.
    expect(metrics).toMatch(/gateway_http_request_duration_seconds_bucket\{le="\+Inf",method="GET",route="\/v1\/labels\/:labelId",status="200"\} [1-9]/);
    expect(metrics).toMatch(/gateway_http_request_duration_seconds_count\{method="GET",route="\/v1\/labels\/:labelId",status="404"\} 1/);
    expect(metrics).not.toContain(label.id);
    expect(metrics).toMatch(/# TYPE gateway_fine_tuning_jobs gauge/);
    expect(metrics).toMatch(/# TYPE gateway_provider_calls_total counter/);
  });

  it('answers unknown routes with 404 in the error shape', async () => {
    const res = await api(gw, 'GET', '/v1/nothing-here');
    expect(res.status).toBe(404);
    expect(res.body.error).toMatchObject({ type: 'not_found_error' });
  });

  it('shows a browser at /graphql a page that loads nothing from another origin (the console explorer, built or not)', async () => {
    const res = await fetch(`${gw.url}/graphql`, { headers: { accept: 'text/html' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toContain("default-src 'self'");
    const html = await res.text();
    expect(html).toMatch(/GraphQL explorer/);
    expect(html).not.toMatch(/(src|href)="https?:|apollo/i);
  });
});

describe('production mode', () => {
  const prod = useTestGateway({ NODE_ENV: 'production' });

  it('has no Sandbox and no introspection', async () => {
    const page = await fetch(`${prod.url}/graphql`, { headers: { accept: 'text/html' } });
    expect(await page.text()).not.toMatch(/sandbox/i);
    const res = await api(prod, 'POST', '/graphql', { body: { query: '{ __schema { types { name } } }' } });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
  });
});

describe('CORS and request logs', () => {
  const ORIGIN = 'https://console.example.com';
  const logs: string[] = [];
  let database: TestDatabase;
  let gateway: RunningGateway;
  const key = `gw_test_${'c'.repeat(32)}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-cors-'));
  beforeAll(async () => {
    database = await createTestDatabase();
    const config = loadConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      DATA_DIR: dataDir,
      GATEWAY_BOOTSTRAP_API_KEY: key,
      GATEWAY_CORS_ORIGINS: `${ORIGIN}, https://other.example.com`,
      ...(database.databaseUrl ? { DATABASE_URL: database.databaseUrl } : {}),
    });
    config.pgliteDir = database.pgliteDir;
    gateway = await startGateway(config, createLogger(config.logLevel, { write: (line: string) => void logs.push(line) }), {
      pgliteLoadDataDir: database.pgliteLoadDataDir,
    });
  });
  afterAll(async () => {
    await gateway.stop();
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers preflights of both faces without a key, for the configured origins only', async () => {
    for (const path of ['/v1/labels', '/graphql']) {
      const preflight = await fetch(gateway.url + path, {
        method: 'OPTIONS',
        headers: { origin: ORIGIN, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,x-gateway-api-key' },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin')).toBe(ORIGIN);
      expect(preflight.headers.get('access-control-allow-headers')).toBe('content-type,x-gateway-api-key');
      expect(preflight.headers.get('access-control-allow-methods')).toContain('PATCH');
    }
    const actual = await gatewayFetch(`${gateway.url}/v1/labels`, { headers: { origin: ORIGIN, 'x-gateway-api-key': key } });
    expect(actual.status).toBe(200);
    expect(actual.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    expect(actual.headers.get('vary')).toBe('Origin');
    const stranger = await gatewayFetch(`${gateway.url}/v1/labels`, { headers: { origin: 'https://evil.example.com', 'x-gateway-api-key': key } });
    expect(stranger.headers.get('access-control-allow-origin')).toBeNull();
    expect(stranger.headers.get('vary')).toBe('Origin');
    // No Origin (a server-side client): no origin allowed, and caches told the answer varies by it.
    const server = await gatewayFetch(`${gateway.url}/v1/labels`, { headers: { 'x-gateway-api-key': key } });
    expect(server.headers.get('access-control-allow-origin')).toBeNull();
    expect(server.headers.get('vary')).toBe('Origin');
  });

  it('sends no CORS headers when no origin is configured', async () => {
    // The file's gateway, which has no GATEWAY_CORS_ORIGINS.
    const res = await fetch(`${gw.url}/graphql`, { method: 'OPTIONS', headers: { origin: ORIGIN, 'access-control-request-method': 'POST' } });
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    const actual = await gatewayFetch(`${gw.url}/v1/labels`, { headers: { origin: ORIGIN, 'x-gateway-api-key': gw.key } });
    expect(actual.headers.get('access-control-allow-origin')).toBeNull();
    expect(actual.headers.get('vary')).toBe('Origin');
  });

  it('allows every origin when configured with *, with or without an Origin', async () => {
    const gw = await startTestGateway({ GATEWAY_CORS_ORIGINS: '*' });
    try {
      for (const headers of [{ origin: ORIGIN }, {}] as Record<string, string>[]) {
        const res = await gatewayFetch(`${gw.url}/v1/labels`, { headers: { ...headers, 'x-gateway-api-key': gw.key } });
        expect(res.status).toBe(200);
        expect(res.headers.get('access-control-allow-origin')).toBe('*');
        expect(res.headers.get('vary')).toBeNull();
      }
      const preflight = await fetch(`${gw.url}/v1/labels`, { method: 'OPTIONS', headers: { origin: ORIGIN, 'access-control-request-method': 'POST' } });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    } finally {
      await gw.stop();
    }
  });

  it('logs the full route pattern of each request, for answers and errors alike', async () => {
    const label = (await api({ url: gateway.url, key }, 'GET', '/v1/labels')).body.data[0];
    await api({ url: gateway.url, key }, 'GET', `/v1/labels/${label.id}`);
    await api({ url: gateway.url, key }, 'GET', '/v1/labels/00000000-0000-4000-8000-000000000000');
    const requests = logs.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request' && l.path.startsWith('/v1/labels/'));
    expect(requests).toEqual([
      expect.objectContaining({ method: 'GET', path: `/v1/labels/${label.id}`, route: '/v1/labels/:labelId', status: 200 }),
      expect.objectContaining({ method: 'GET', path: '/v1/labels/00000000-0000-4000-8000-000000000000', route: '/v1/labels/:labelId', status: 404 }),
    ]);
    expect(logs.join('\n')).not.toContain(key);
  });
});
