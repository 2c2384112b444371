/**
 * Vertex AI credentials and settings through the registry, against the fake token endpoint (which
 * verifies each assertion's RS256 signature and claims) and the fake APIs (which accept only the
 * tokens it issued): one exchange for many calls, concurrent ones included; renewal shortly before
 * expiry and after a refusal; a failed exchange a clear provider error; a caller's own access token
 * used as it is; hostile or malformed settings refused before any connection.
 */
import { normaliseStored } from '../../src/providers/settings';
import { TokenCache } from '../../src/providers/vertex-ai/token-cache';
import { vertexAIProvider } from '../../src/providers/vertex-ai';
import { CLOUD_PLATFORM_SCOPE } from '../fakes/google-auth';
import { startFakeVertex, type FakeVertex } from '../fakes/vertex-server';
import { gatewayError, vertexClient } from './vertex-ai.support';

let fake: FakeVertex;

beforeEach(async () => {
  fake = await startFakeVertex();
});

afterEach(() => fake.close());

const exchanges = () => fake.state.oauth.exchanges;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('Vertex AI service-account auth', () => {
  it('signs one RS256 assertion the token endpoint verifies, and shares its token across calls and concurrent callers', async () => {
    const vertex = vertexClient(fake);
    await Promise.all([vertex.listJobs({}), vertex.listJobs({}), vertex.listFiles({ order: 'desc' }), vertex.listJobs({ limit: 1 })]);
    await vertexClient(fake).listJobs({});
    expect(exchanges()).toBe(1);
    const [exchange] = fake.state.oauth.requests;
    expect(exchange.error).toBeUndefined();
    expect(exchange.header).toEqual({ alg: 'RS256', typ: 'JWT', kid: fake.serviceAccount.private_key_id });
    const { iat, exp, ...claims } = exchange.claims!;
    expect(claims).toEqual({ iss: fake.serviceAccount.client_email, scope: CLOUD_PLATFORM_SCOPE, aud: fake.tokenUrl });
    expect(Number(exp) - Number(iat)).toBe(3600);
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

  it("uses a caller's own access token as it is, without an exchange", async () => {
    const token = fake.issueToken();
    const headers = { 'x-gateway-vertex-service-account-json': undefined, authorization: `Bearer ${token}` };
    await vertexClient(fake, { headers }).listJobs({});
    expect(exchanges()).toBe(0);
    expect(fake.state.requests.at(-1)?.headers.authorization).toBe(`Bearer ${token}`);
    // A refused access token is not retried (there is nothing to renew it with).
    fake.expireTokens();
    const before = fake.state.requests.length;
    const err = await gatewayError(vertexClient(fake, { headers }).listJobs({}));
    expect(err).toMatchObject({ kind: 'provider', status: 401, code: 'UNAUTHENTICATED' });
    expect(err.message).not.toContain(token);
    expect(fake.state.requests.length).toBe(before + 1);
  });

  it('prefers the key file when the OpenAI SDK also sends an Authorization header', async () => {
    await vertexClient(fake, { headers: { authorization: 'Bearer sk-unused-by-the-sdk' } }).listJobs({});
    expect(exchanges()).toBe(1);
  });
});

describe('Vertex AI settings', () => {
  const refused = async (headers: Record<string, string | undefined>) => {
    const err = await gatewayError(vertexClient(fake, { headers }).listJobs({}));
    expect(fake.state.requests).toHaveLength(0);
    return err;
  };

  it('refuses a hostile bucket for files before any connection', async () => {
    const err = await gatewayError(vertexClient(fake, { headers: { 'x-gateway-vertex-storage-bucket-name': 'b/../../o' } }).listFiles({}));
    expect(err).toMatchObject({ status: 400, param: 'x-gateway-vertex-storage-bucket-name' });
    expect(fake.state.requests).toHaveLength(0);
  });

  it.each([
    ['not JSON', 'not a key file', 'is neither a JSON service-account key file nor base64 of one'],
    ['another kind of key', JSON.stringify({ type: 'authorized_user', client_id: 'x' }), 'type must be "service_account"'],
    ['a key without its private key', JSON.stringify({ type: 'service_account', client_email: 'a@b.iam.gserviceaccount.com' }), 'private_key is missing'],
    [
      'a broken private key',
      JSON.stringify({ type: 'service_account', client_email: 'a@b.iam.gserviceaccount.com', private_key: 'garbage' }),
      'not a PEM private key',
    ],
  ])('refuses %s as a key file with a 400 naming the header, never quoting it', async (_case, value, reason) => {
    const err = await refused({ 'x-gateway-vertex-service-account-json': value });
    expect(err).toMatchObject({ kind: 'invalid_request', status: 400, param: 'x-gateway-vertex-service-account-json', code: 'invalid_setting' });
    expect(err.message).toContain(reason);
    expect(err.message).not.toContain(value);
  });

  it('requires the project and region everywhere, the bucket for files only', async () => {
    expect(await refused({ 'x-gateway-vertex-region': undefined })).toMatchObject({ param: 'x-gateway-vertex-region', code: 'missing_setting' });
    expect(await refused({ 'x-gateway-vertex-project-id': undefined })).toMatchObject({ param: 'x-gateway-vertex-project-id', code: 'missing_setting' });
    const noBucket = vertexClient(fake, { headers: { 'x-gateway-vertex-storage-bucket-name': undefined } });
    expect(await gatewayError(noBucket.listFiles({}))).toMatchObject({ param: 'x-gateway-vertex-storage-bucket-name', code: 'missing_setting' });
    await expect(noBucket.listJobs({})).resolves.toMatchObject({ data: [] });
  });

  it('checks a key file stored in an integration when it is stored', () => {
    const options = { 'x-gateway-vertex-project-id': fake.projectId, 'x-gateway-vertex-region': fake.location };
    const store = (key: string) => () => normaliseStored(vertexAIProvider.settings, { credentials: { service_account_json: key }, options });
    expect(store(JSON.stringify(fake.serviceAccount))).not.toThrow();
    expect(store('{"type":"service_account"}')).toThrow(expect.objectContaining({ status: 400, path: ['credentials', 'service_account_json'] }));
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
