/**
 * Failed authentications (unknown or revoked keys) are limited per client address
 * (GATEWAY_AUTH_FAILURES_PER_MINUTE) and over all clients (GATEWAY_AUTH_FAILURES_GLOBAL_PER_MINUTE): past
 * the limit the client gets 429 with Retry-After before any database read, on both faces, while keys
 * that work keep working. Clients are told apart by X-Forwarded-For here (GATEWAY_TRUST_PROXY=true).
 */
import { randomBytes } from 'node:crypto';
import { ApiKeyRepository } from '../../src/modules/api-keys/api-key.repository';
import { api, startTestGateway, type TestGateway } from '../support/gateway';
import { redisReachable, TEST_REDIS_URL } from '../support/redis';

const LIMITS = { GATEWAY_AUTH_FAILURES_PER_MINUTE: '3', GATEWAY_AUTH_FAILURES_GLOBAL_PER_MINUTE: '12', GATEWAY_TRUST_PROXY: 'true' };

const badKey = () => `gw_${randomBytes(16).toString('hex')}`;
const from = (client: string, key: string | null) => ({ key, headers: { 'x-forwarded-for': client } });

let gw: TestGateway;
/** The gateway's API key lookups (database reads). */
const lookups = () => lookup.mock.calls.length;
const lookup = jest.spyOn(ApiKeyRepository.prototype, 'findActiveScope');
beforeAll(async () => {
  gw = await startTestGateway(LIMITS);
  // The bootstrap key is in the key cache from here on.
  expect((await api(gw, 'GET', '/v1/labels')).status).toBe(200);
});
afterAll(() => gw.stop());

/** The statuses of `n` requests with unknown keys from `client`. */
async function failures(client: string, n: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < n; i++) statuses.push((await api(gw, 'GET', '/v1/labels', from(client, badKey()))).status);
  return statuses;
}

describe('failed authentications', () => {
  it('lets a client fail 3 times, then answers 429 with Retry-After without reading the database', async () => {
    const start = lookups();
    expect(await failures('198.51.100.1', 3)).toEqual([401, 401, 401]);
    expect(lookups()).toBe(start + 3);
    const before = lookups();
    const refused = await api(gw, 'GET', '/v1/labels', from('198.51.100.1', badKey()));
    expect(lookups()).toBe(before);
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ type: 'rate_limit_error', code: 'too_many_failed_authentications' });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(60);
  });

  it('keeps serving a working (cached) key from the refused client, and other clients', async () => {
    expect((await api(gw, 'GET', '/v1/labels', from('198.51.100.1', gw.key))).status).toBe(200);
    expect(await failures('198.51.100.2', 1)).toEqual([401]);
  });

  it('answers the GraphQL face in its own shape', async () => {
    const res = await api(gw, 'POST', '/graphql', { ...from('198.51.100.1', badKey()), body: { query: '{ labels { total } }' } });
    expect(res.status).toBe(429);
    expect(res.body.errors[0].extensions).toMatchObject({ code: 'RATE_LIMITED', errorCode: 'too_many_failed_authentications' });
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });

  it('does not count requests without a key (no lookup is made for them)', async () => {
    for (let i = 0; i < 5; i++) expect((await api(gw, 'GET', '/v1/labels', from('198.51.100.3', null))).status).toBe(401);
    expect(await failures('198.51.100.3', 1)).toEqual([401]);
  });

  it('over all clients, refuses the ones that have failed once the global budget is spent, and no others', async () => {
    // 3 + 1 + 1 failures so far; one each from 7 more addresses spends the 12.
    for (let i = 10; i < 17; i++) expect(await failures(`203.0.113.${i}`, 1)).toEqual([401]);
    expect(await failures('203.0.113.10', 1)).toEqual([429]);
    expect(await failures('198.51.100.2', 1)).toEqual([429]);
    // A client that has not failed is looked up as usual (and gets its 401 for an unknown key).
    expect(await failures('203.0.113.99', 1)).toEqual([401]);
  });
});

const withRedis = redisReachable() ? it : it.skip;

describe('failed authentications with Redis', () => {
  withRedis('are counted across replicas sharing the Redis', async () => {
    const shared = { ...LIMITS, REDIS_URL: TEST_REDIS_URL, GATEWAY_REDIS_KEY_PREFIX: `gw-test-auth:${randomBytes(6).toString('hex')}` };
    const [a, b] = await Promise.all([startTestGateway(shared), startTestGateway(shared)]);
    try {
      const fail = async (replica: TestGateway) => (await api(replica, 'GET', '/v1/labels', from('192.0.2.7', badKey()))).status;
      expect([await fail(a), await fail(a), await fail(a)]).toEqual([401, 401, 401]);
      // Replica b has never seen this client: its first failure is the fourth, which blocks it there too.
      expect(await fail(b)).toBe(401);
      expect(await fail(b)).toBe(429);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });
});
