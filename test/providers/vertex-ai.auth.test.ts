/**
 * Vertex AI credentials through the registry, against the fake token endpoint (which verifies each
 * assertion's RS256 signature and claims) and the fake APIs (which accept only the tokens it
 * issued): one exchange for many calls, concurrent ones included; a base64 key file; renewal shortly
 * before expiry and after a refusal; a failed exchange a clear provider error; the bucket needed for
 * files only. The assertion's header and claims, a caller's own access token and malformed or
 * missing settings are checked through the route (test/client-mode/vertex-ai.test.ts).
 */
import { TokenCache } from '../../src/providers/vertex-ai/token-cache';
import { startFakeVertex, type FakeVertex } from '../fakes/vertex-server';
import { failure as gatewayError } from '../support/expect';
import { vertexClient } from './vertex-ai.support';

let fake: FakeVertex;

beforeEach(async () => {
  fake = await startFakeVertex();
});

afterEach(() => fake.close());

const exchanges = () => fake.state.oauth.exchanges;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('Vertex AI service-account auth', () => {
  it('shares one token exchange across calls and concurrent callers', async () => {
    const vertex = vertexClient(fake);
    await Promise.all([vertex.listJobs({}), vertex.listJobs({}), vertex.listFiles({ order: 'desc' }), vertex.listJobs({ limit: 1 })]);
    await vertexClient(fake).listJobs({});
    expect(exchanges()).toBe(1);
    // Every API call carried the one token the exchange issued.
    const apiCalls = fake.state.requests.filter((r) => r.path !== '/token');
    expect(apiCalls).toHaveLength(5);
    expect(new Set(apiCalls.map((r) => r.headers.authorization)).size).toBe(1);
  });

  it('takes the key file base64-encoded', async () => {
    const encoded = Buffer.from(JSON.stringify(fake.serviceAccount)).toString('base64');
    await vertexClient(fake, { headers: { 'x-gateway-vertex-service-account-json': encoded } }).listJobs({});
    expect(exchanges()).toBe(1);
  });

  it('exchanges again shortly before the token expires', async () => {
    fake.settings.tokenLifetimeSeconds = 1; // renewed at half its life
    await vertexClient(fake).listJobs({});
    await vertexClient(fake).listJobs({});
    expect(exchanges()).toBe(1);
    await sleep(600);
    await vertexClient(fake).listJobs({});
    expect(exchanges()).toBe(2);
  });

  it('renews a cached token that Google refuses before its time, once', async () => {
    await vertexClient(fake).listJobs({});
    fake.expireTokens();
    await expect(vertexClient(fake).listJobs({})).resolves.toMatchObject({ data: [] });
    expect(exchanges()).toBe(2);
  });

  it("reports a refused exchange as a provider error with Google's reason, and never calls the API without a token", async () => {
    const stranger = fake.unknownServiceAccount();
    const err = await gatewayError(vertexClient(fake, { headers: { 'x-gateway-vertex-service-account-json': JSON.stringify(stranger) } }).listJobs({}));
    expect(err).toMatchObject({ kind: 'provider', type: 'provider_error', status: 400, code: 'invalid_grant' });
    expect(err.message).toBe(`Google OAuth: Invalid grant: account not found (exchanging the key of ${stranger.client_email} for an access token)`);
    expect(fake.state.requests.map((r) => r.path)).toEqual(['/token']);
  });

  it('maps a token endpoint that fails to 502 after retrying it, and tries again on the next call', async () => {
    fake.failNext('POST', '/token', 503, { times: 3 });
    expect(await gatewayError(vertexClient(fake).listJobs({}))).toMatchObject({ kind: 'provider', status: 502 });
    expect(fake.state.requests.filter((r) => r.path === '/token')).toHaveLength(3);
    await expect(vertexClient(fake).listJobs({})).resolves.toMatchObject({ data: [] });
  });
});

describe('Vertex AI settings', () => {
  it('requires the bucket for files only', async () => {
    const noBucket = vertexClient(fake, { headers: { 'x-gateway-vertex-storage-bucket-name': undefined } });
    expect(await gatewayError(noBucket.listFiles({}))).toMatchObject({ param: 'x-gateway-vertex-storage-bucket-name', code: 'missing_setting' });
    await expect(noBucket.listJobs({})).resolves.toMatchObject({ data: [] });
  });
});

describe('TokenCache', () => {
  it('keeps a bounded number of accounts, dropping the least recently used, and forgets a failed exchange', async () => {
    let now = 0;
    const cache = new TokenCache(2, () => now);
    let issued = 0;
    const exchange = () => Promise.resolve({ value: `token-${++issued}`, lifetimeSeconds: 3600 });
    await cache.get('a', exchange);
    await cache.get('b', exchange);
    await cache.get('a', exchange); // a is now the most recently used
    await cache.get('c', exchange); // drops b
    expect(cache.size).toBe(2);
    expect((await cache.get('a', exchange)).value).toBe('token-1');
    expect((await cache.get('b', exchange)).value).toBe('token-4');
    await expect(cache.get('d', () => Promise.reject(new Error('refused')))).rejects.toThrow('refused');
    expect((await cache.get('d', exchange)).value).toBe('token-5');
    now = 3600 * 1000 - 5 * 60 * 1000; // five minutes before expiry
    expect((await cache.get('d', exchange)).value).toBe('token-6');
  });
});
