import { ApiKeyCache } from '../../src/modules/api-keys/api-key.cache';
import { api, createOrganisation, gql, startTestGateway, stopBackgroundWork, type TestGateway } from '../support/gateway';

/**
 * The hot path: an authenticated read costs one SQL statement (the read itself), because keys
 * resolve to their scope from an in-process cache; a revocation empties it at once.
 */
let gw: TestGateway;
let statements: string[] = [];
beforeAll(async () => {
  gw = await startTestGateway({}, { onQuery: (sql) => statements.push(sql) });
  // The job monitor's and batch runner's ticks would land in a counted window now and then.
  await stopBackgroundWork(gw);
});
afterAll(() => gw.stop());

/** The SQL statements one request sends, with its answer. */
async function counted<T>(request: () => Promise<T>): Promise<{ result: T; sql: string[] }> {
  statements = [];
  const result = await request();
  return { result, sql: statements };
}

async function newLabel(name: string): Promise<string> {
  const created = await api(gw, 'POST', '/v1/labels', { body: { name } });
  expect(created.status).toBe(200);
  return created.body.id;
}

async function workspaceKey(name: string): Promise<{ url: string; key: string; id: string }> {
  const issued = await api(gw, 'POST', '/v1/api-keys', { body: { name, workspace_id: 'default' } });
  expect(issued.status).toBe(200);
  return { url: gw.url, key: issued.body.key, id: issued.body.id };
}

describe('API key cache: one SQL statement per authenticated read', () => {
  it('reads a label over REST and GraphQL with one statement, with an organisation key and a workspace key', async () => {
    const id = await newLabel('hot-path');
    const wsKey = await workspaceKey('hot path');
    // A key's first request reads it (one statement, the default workspace joined in) …
    const cold = await counted(() => api(wsKey, 'GET', `/v1/labels/${id}`));
    expect(cold.result.status).toBe(200);
    expect(cold.sql).toHaveLength(2);
    expect(cold.sql[0]).toMatch(/api_keys/);
    // … the next ones only the label.
    for (const caller of [gw, wsKey]) {
      const rest = await counted(() => api(caller, 'GET', `/v1/labels/${id}`));
      expect(rest.result.status).toBe(200);
      expect(rest.result.body).toMatchObject({ id, name: 'hot-path' });
      expect(rest.sql).toHaveLength(1);
      expect(rest.sql[0]).toMatch(/"labels"/);

      const graphql = await counted(() => gql(caller, `{ label(id: "${id}") { id name } }`));
      expect(graphql.result.body).toEqual({ data: { label: { id, name: 'hot-path' } } });
      expect(graphql.sql).toHaveLength(1);
      expect(graphql.sql[0]).toMatch(/"labels"/);
    }
  });

  it('keeps tenancy: another organisation’s cached key still gets 404 for this label', async () => {
    const id = await newLabel('not-yours');
    const other = await createOrganisation(gw, 'Cache neighbour');
    for (let i = 0; i < 2; i++) {
      const res = await api(other, 'GET', `/v1/labels/${id}`);
      expect(res.status).toBe(404);
      expect(res.body.error.type).toBe('not_found_error');
    }
  });

  it('refuses a revoked key from the next request on, over REST and GraphQL', async () => {
    const id = await newLabel('revocation');
    const wsKey = await workspaceKey('to revoke');
    expect((await api(wsKey, 'GET', `/v1/labels/${id}`)).status).toBe(200);
    expect((await gql(wsKey, `{ label(id: "${id}") { id } }`)).body.data.label.id).toBe(id);

    expect((await api(gw, 'DELETE', `/v1/api-keys/${wsKey.id}`)).status).toBe(200);
    const rest = await api(wsKey, 'GET', `/v1/labels/${id}`);
    expect(rest.status).toBe(401);
    expect(rest.body.error).toMatchObject({ type: 'authentication_error', code: 'invalid_api_key' });
    const graphql = await gql(wsKey, `{ label(id: "${id}") { id } }`);
    expect(graphql.body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    expect(graphql.body.data ?? null).toBeNull();
  });

  it('hears of a revocation made outside this process (admin CLI, SQL) through the database', async () => {
    const wsKey = await workspaceKey('revoked elsewhere');
    expect((await api(wsKey, 'GET', '/v1/labels')).status).toBe(200);
    // As another process would: straight into the database, nothing told to this one's services.
    await gw.gateway.services.db.prisma.$executeRaw`UPDATE api_keys SET revoked_at = now() WHERE id = ${wsKey.id}::uuid`;
    await expectRefusedSoon(wsKey);
  });

  it('hears of a deleted workspace: its keys and the organisation key’s default scope are dropped', async () => {
    const other = await createOrganisation(gw, 'Workspace removal');
    expect((await api(other, 'GET', '/v1/labels')).status).toBe(200);
    await gw.gateway.services.db.prisma.workspace.delete({ where: { id: other.workspaceId } });
    // The organisation key is still valid, but its `default` workspace is gone: no stale scope is used.
    const res = await pollUntil(
      () => api(other, 'GET', '/v1/labels'),
      (r) => r.status !== 200,
    );
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ param: 'workspace_id' });
  });
});

async function pollUntil<T>(request: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  // Postgres delivers notifications asynchronously (within milliseconds); PGlite before the statement returns.
  const deadline = Date.now() + 2000;
  for (;;) {
    const value = await request();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function expectRefusedSoon(caller: { url: string; key: string }): Promise<void> {
  const res = await pollUntil(
    () => api(caller, 'GET', '/v1/labels'),
    (r) => r.status === 401,
  );
  expect(res.status).toBe(401);
}

describe('ApiKeyCache', () => {
  const caller = (n: number) => ({ keyId: `key-${n}`, organisationId: `org-${n % 2}`, workspaceId: null });

  it('is bounded: beyond its size the least recently used key goes', () => {
    const cache = new ApiKeyCache({ maxEntries: 3, ttlMs: 60_000 }, true);
    for (let n = 0; n < 3; n++) cache.store(`h${n}`, caller(n), cache.token());
    expect(cache.get('h0')).toEqual(caller(0));
    for (let n = 3; n < 10; n++) cache.store(`h${n}`, caller(n), cache.token());
    expect(cache.size).toBe(3);
    expect(['h0', 'h1', 'h2', 'h6'].map((h) => cache.get(h))).toEqual([undefined, undefined, undefined, undefined]);
    expect(['h7', 'h8', 'h9'].map((h) => cache.get(h)?.keyId)).toEqual(['key-7', 'key-8', 'key-9']);
  });

  it('forgets a key after its TTL', () => {
    let now = 1000;
    const cache = new ApiKeyCache({ maxEntries: 10, ttlMs: 500, now: () => now }, true);
    cache.store('h', caller(1), cache.token());
    now += 499;
    expect(cache.get('h')).toEqual(caller(1));
    now += 1;
    expect(cache.get('h')).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('drops what an invalidation names, and ignores a read that began before one', () => {
    const cache = new ApiKeyCache({ maxEntries: 10, ttlMs: 60_000 }, true);
    for (let n = 0; n < 4; n++) cache.store(`h${n}`, caller(n), cache.token());
    cache.applyNotification('key:key-0');
    expect(cache.get('h0')).toBeUndefined();
    cache.applyNotification('organisation:org-1');
    expect(['h1', 'h2', 'h3'].map((h) => cache.get(h)?.keyId)).toEqual([undefined, 'key-2', undefined]);

    const before = cache.token();
    cache.invalidateKey('key-9');
    cache.store('h9', caller(9), before);
    expect(cache.get('h9')).toBeUndefined();
  });

  it('tells a change’s author when every listening process has applied the change, or gives up waiting', async () => {
    const cache = new ApiKeyCache({ maxEntries: 10, ttlMs: 60_000 }, true);
    expect(cache.isAwaited('key:key-1')).toBe(false);
    const announced = cache.whenHeard('key:key-1', 60_000);
    expect(cache.isAwaited('key:key-1')).toBe(true);
    let heard = false;
    void announced.heard.then(() => (heard = true));
    cache.delivered('key:key-2');
    // Applied here is not yet applied everywhere.
    cache.applyNotification('key:key-1');
    await Promise.resolve();
    expect(heard).toBe(false);
    cache.delivered('key:key-1');
    await announced.heard;
    expect(heard).toBe(true);
    expect(cache.isAwaited('key:key-1')).toBe(false);

    const started = Date.now();
    await cache.whenHeard('key:never', 50).heard;
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
  });

  it('stores and serves nothing while inactive (its invalidations could be missed), and forgets all on going inactive', () => {
    const cache = new ApiKeyCache({ maxEntries: 10, ttlMs: 60_000 }, false);
    cache.store('h', caller(1), cache.token());
    expect(cache.get('h')).toBeUndefined();
    cache.setActive(true);
    cache.store('h', caller(1), cache.token());
    expect(cache.get('h')).toEqual(caller(1));
    cache.setActive(false);
    expect(cache.size).toBe(0);
  });
});
