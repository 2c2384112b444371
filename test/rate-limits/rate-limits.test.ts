import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { api, createOrganisation, gql, startTestGateway, useTestGateway } from '../support/gateway';
import { redisReachable, TEST_REDIS_URL } from '../support/redis';
import { RateLimiter } from '../../src/modules/rate-limits/rate-limiter';

const REDIS = redisReachable();
const withRedis = REDIS ? it : it.skip;
const redisNote = (name: string) => (REDIS ? name : `${name} — skipped: no Redis at ${TEST_REDIS_URL}`);
const POSTGRES = process.env.TEST_DATABASE_URL;

/** A fresh key prefix per test, so counters left in a shared Redis by another run never count. */
const uniquePrefix = () => `gw-test-rl:${randomBytes(6).toString('hex')}`;

const silent = { warn: () => undefined, info: () => undefined };

/** A port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (typeof address !== 'object' || address === null) throw new Error('no port');
  return address.port;
}

function expectRateHeaders(headers: Headers, remaining: number): void {
  expect(headers.get('x-ratelimit-limit-requests')).toBe('60');
  expect(headers.get('x-ratelimit-remaining-requests')).toBe(String(remaining));
  expect(headers.get('x-ratelimit-reset-requests')).toMatch(/^\d+s$|^1m0s$/);
}

/** Sends `n` listing requests one after another and returns their statuses. */
async function burst(gw: { url: string; key: string }, n: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < n; i++) statuses.push((await api(gw, 'GET', '/v1/labels')).status);
  return statuses;
}

describe('rate limits in memory (GATEWAY_RATE_LIMIT_PER_MINUTE=60, no REDIS_URL)', () => {
  const gw = useTestGateway({ GATEWAY_RATE_LIMIT_PER_MINUTE: '60' });

  it('serves 60 requests of a key in a minute with the headers, refuses the 61st with 429 and Retry-After', async () => {
    const first = await api(gw, 'GET', '/v1/labels');
    expect(first.status).toBe(200);
    expectRateHeaders(first.headers, 59);
    expect(await burst(gw, 59)).toEqual(Array(59).fill(200));

    const refused = await api(gw, 'GET', '/v1/labels');
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      error: { message: expect.stringMatching(/rate limit/i), type: 'rate_limit_error', param: null, code: 'rate_limit_exceeded' },
    });
    expectRateHeaders(refused.headers, 0);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);

    // Every route behind the key counts: client mode too (refused before any provider call), GraphQL (in its shape).
    expect((await api(gw, 'POST', '/v1/labels', { body: { name: 'late' } })).status).toBe(429);
    const clientMode = await api(gw, 'GET', '/v1/files', { headers: { 'x-gateway-provider': 'openai', authorization: 'Bearer sk-unused' } });
    expect(clientMode.status).toBe(429);
    expect(clientMode.body.error.type).toBe('rate_limit_error');
    const graphql = await gql(gw, '{ __typename }');
    expect(graphql.status).toBe(429);
    expect(graphql.body.errors[0].extensions.code).toBe('RATE_LIMITED');
    expect(graphql.headers.get('retry-after')).not.toBeNull();
  });

  it('counts per API key: another key still has its whole budget, on both faces', async () => {
    const other = await createOrganisation(gw);
    const res = await api(other, 'GET', '/v1/labels');
    expect(res.status).toBe(200);
    expectRateHeaders(res.headers, 59);
    const graphql = await gql(other, '{ __typename }');
    expect(graphql.status).toBe(200);
    expectRateHeaders(graphql.headers, 58);
  });

  it('does not count unauthenticated requests against anyone and leaves health endpoints alone', async () => {
    const res = await api(gw, 'GET', '/v1/labels', { key: 'gw_not_a_real_key_at_all' });
    expect(res.status).toBe(401);
    expect(res.headers.get('x-ratelimit-limit-requests')).toBeNull();
    expect((await api(gw, 'GET', '/healthz', { key: null })).status).toBe(200);
  });
});

describe('without GATEWAY_RATE_LIMIT_PER_MINUTE', () => {
  it('sets no limit and no headers', async () => {
    const gw = await startTestGateway();
    try {
      expect(await burst(gw, 70)).toEqual(Array(70).fill(200));
      expect((await api(gw, 'GET', '/v1/labels')).headers.get('x-ratelimit-limit-requests')).toBeNull();
    } finally {
      await gw.stop();
    }
  });
});

describe('rate limits shared through Redis', () => {
  withRedis(redisNote('two limiters on one Redis enforce one budget per key'), async () => {
    const keyPrefix = uniquePrefix();
    const a = new RateLimiter({ perMinute: 60, redisUrl: TEST_REDIS_URL, keyPrefix }, silent);
    const b = new RateLimiter({ perMinute: 60, redisUrl: TEST_REDIS_URL, keyPrefix }, silent);
    await Promise.all([a.ready(2000), b.ready(2000)]);
    try {
      const results = [];
      for (let i = 0; i < 61; i++) results.push(await (i % 2 ? b : a).consume('key-1'));
      expect(results.filter((r) => r.allowed)).toHaveLength(60);
      expect(results[60]).toMatchObject({ allowed: false, remaining: 0 });
      expect((await a.consume('key-2')).allowed).toBe(true);
    } finally {
      a.close();
      b.close();
    }
  });

  const twoGateways = 'two gateways on one database and one Redis: 30 requests through each, the 61st (through either) is refused';
  (REDIS && POSTGRES ? it : it.skip)(REDIS && POSTGRES ? twoGateways : `${twoGateways} — skipped: needs Redis and Postgres (TEST_DATABASE_URL)`, async () => {
    const env = { GATEWAY_RATE_LIMIT_PER_MINUTE: '60', REDIS_URL: TEST_REDIS_URL, GATEWAY_REDIS_KEY_PREFIX: uniquePrefix() };
    const a = await startTestGateway(env);
    const b = await startTestGateway({ ...env, DATABASE_URL: a.database.databaseUrl ?? '', GATEWAY_BOOTSTRAP_API_KEY: a.key, reuseDatabase: '1' });
    try {
      expect(await burst(a, 30)).toEqual(Array(30).fill(200));
      const last = await api(b, 'GET', '/v1/labels');
      expect(last.status).toBe(200);
      expectRateHeaders(last.headers, 29);
      expect(await burst(b, 29)).toEqual(Array(29).fill(200));
      expect((await api(a, 'GET', '/v1/labels')).status).toBe(429);
      expect((await api(b, 'GET', '/v1/labels')).status).toBe(429);
    } finally {
      await b.stop();
      await a.stop();
    }
  });

  withRedis(redisNote('a gateway on Redis enforces the limit'), async () => {
    const gw = await startTestGateway({ GATEWAY_RATE_LIMIT_PER_MINUTE: '60', REDIS_URL: TEST_REDIS_URL, GATEWAY_REDIS_KEY_PREFIX: uniquePrefix() });
    try {
      expect(await burst(gw, 60)).toEqual(Array(60).fill(200));
      const refused = await api(gw, 'GET', '/v1/labels');
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).not.toBeNull();
    } finally {
      await gw.stop();
    }
  });

  it('keeps serving when Redis is unreachable (counting in the process), and logs the outage once', async () => {
    const warnings: string[] = [];
    const limiter = new RateLimiter(
      { perMinute: 3, redisUrl: `redis://127.0.0.1:${await closedPort()}`, keyPrefix: uniquePrefix() },
      { warn: (_obj: unknown, msg?: string) => void warnings.push(msg ?? ''), info: () => undefined },
    );
    try {
      const results = [];
      for (let i = 0; i < 4; i++) results.push((await limiter.consume('key-1')).allowed);
      expect(results).toEqual([true, true, true, false]);
      await new Promise((resolve) => setTimeout(resolve, 300)); // ioredis retries meanwhile
      expect(warnings).toEqual([expect.stringMatching(/Redis unreachable/)]);
    } finally {
      limiter.close();
    }

    const gw = await startTestGateway({ GATEWAY_RATE_LIMIT_PER_MINUTE: '60', REDIS_URL: `redis://127.0.0.1:${await closedPort()}` });
    try {
      const res = await api(gw, 'GET', '/v1/labels');
      expect(res.status).toBe(200);
      expectRateHeaders(res.headers, 59);
    } finally {
      await gw.stop();
    }
  });
});
