/**
 * Two gateway processes on one Postgres database, each with its own API key cache: a key revoked
 * through one is refused by the other on the next request (the revocation is answered once every
 * listening process has acknowledged it), also while the other's notification connection is down (it
 * stops caching then) and after it has reconnected.
 */
import { Client } from 'pg';
import { handledChannel, LISTENER_APPLICATION_NAME } from '../../src/db/notifications';
import { API_KEY_CHANNEL } from '../../src/modules/api-keys/api-key.cache';
import { adminQuery } from '../support/database';
import { api, gql, startTestGateway, type TestGateway } from '../support/gateway';
import { describeOnPostgres, spawnReplica, type GatewayProcess } from '../support/gateway-process';
import { eventually } from '../support/expect';

const LISTENERS = 'application_name = $1 AND datname = current_database()';

describeOnPostgres('API key revocation across two gateway processes on one Postgres', () => {
  let a: TestGateway;
  let b: GatewayProcess;
  let label: string;

  beforeAll(async () => {
    a = await startTestGateway();
    b = await spawnReplica({ databaseUrl: a.database.databaseUrl!, dataDir: a.config.dataDir, key: a.key });
    const created = await api(a, 'POST', '/v1/labels', { body: { name: 'replicated' } });
    expect(created.status).toBe(200);
    label = created.body.id;
  }, 120_000);

  afterAll(async () => {
    await b?.stop();
    await a?.stop();
  });

  /** A fresh workspace key, already used (so cached) by both processes. */
  async function keyInUse(name: string): Promise<{ id: string; key: string }> {
    const issued = await api(a, 'POST', '/v1/api-keys', { body: { name, workspace_id: 'default' } });
    expect(issued.status).toBe(200);
    for (const url of [a.url, b.url, b.url]) expect((await api({ url, key: issued.body.key }, 'GET', `/v1/labels/${label}`)).status).toBe(200);
    return { id: issued.body.id, key: issued.body.key };
  }

  const read = (url: string, key: string) => api({ url, key }, 'GET', `/v1/labels/${label}`);

  it('refuses in the other process, from the next request on, a key revoked through one (REST and GraphQL)', async () => {
    for (let i = 0; i < 10; i++) {
      const key = await keyInUse(`replica key ${i}`);
      expect((await api(a, 'DELETE', `/v1/api-keys/${key.id}`)).status).toBe(200);
      // The revocation was answered once every listening process had applied it: the next request is refused.
      const other = await read(b.url, key.key);
      expect(other.status).toBe(401);
      expect(other.body.error.type).toBe('authentication_error');
      expect((await gql({ url: b.url, key: key.key }, `{ label(id: "${label}") { id } }`)).body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
      expect((await read(a.url, key.key)).status).toBe(401);
    }
  });

  it('answers a revocation once every listening process has acknowledged it, waiting for a slow one (bounded)', async () => {
    // A third listener, as a gateway process would be, that takes 400 ms to handle each notification.
    const slow = new Client({ connectionString: a.database.databaseUrl!, application_name: LISTENER_APPLICATION_NAME });
    await slow.connect();
    try {
      slow.on('notification', ({ channel, payload }) => {
        if (channel !== API_KEY_CHANNEL) return;
        setTimeout(() => void slow.query('SELECT pg_notify($1, $2)', [handledChannel(API_KEY_CHANNEL), payload]), 400);
      });
      await slow.query(`LISTEN ${API_KEY_CHANNEL}`);
      const key = await keyInUse('slow listener');
      const started = Date.now();
      expect((await api(a, 'DELETE', `/v1/api-keys/${key.id}`)).status).toBe(200);
      const waited = Date.now() - started;
      expect(waited).toBeGreaterThanOrEqual(400);
      expect((await read(b.url, key.key)).status).toBe(401);

      // A listener that never acknowledges holds a revocation up for two seconds at most.
      slow.removeAllListeners('notification');
      const stuck = await keyInUse('stuck listener');
      const since = Date.now();
      expect((await api(a, 'DELETE', `/v1/api-keys/${stuck.id}`)).status).toBe(200);
      expect(Date.now() - since).toBeGreaterThanOrEqual(1900);
      expect((await read(b.url, stuck.key)).status).toBe(401);
    } finally {
      await slow.end();
    }
  });

  it('refuses in the other process a key revoked by a third party writing to the database (as the admin CLI does)', async () => {
    const key = await keyInUse('revoked by SQL');
    await adminQuery(a.database.databaseUrl!, 'UPDATE api_keys SET revoked_at = now() WHERE id = $1', [key.id]);
    // The database announces it at commit: both processes refuse the key without a restart.
    await eventually(async () => (await read(b.url, key.key)).status === 401, 15_000, 20, 'the spawned process to refuse the key');
    await eventually(async () => (await read(a.url, key.key)).status === 401, 15_000, 20, 'this process to refuse the key');
  });

  it('stops caching while its notification connection is down, and caches again once it is back', async () => {
    const url = a.database.databaseUrl!;
    const cache = a.gateway.services.apiKeys.cache;
    const key = await keyInUse('listener loss');
    expect(cache.isActive).toBe(true);
    expect(cache.size).toBeGreaterThan(0);

    // Cut both processes' listening connections; each notices, stops caching and reconnects with backoff.
    const listeners = async () => (await adminQuery(url, `SELECT pid FROM pg_stat_activity WHERE ${LISTENERS}`, [LISTENER_APPLICATION_NAME])).map((r) => r.pid);
    const cut = await listeners();
    expect(cut).toHaveLength(2);
    await adminQuery(url, 'SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid', [cut]);
    await eventually(async () => cache.size === 0, 15_000, 20, 'this process to notice the lost connection and forget its keys');
    await eventually(async () => cache.isActive, 15_000, 20, 'this process to listen again');
    // Both on new connections (a terminated backend may linger in pg_stat_activity for a moment).
    await eventually(async () => (await listeners()).filter((pid) => !cut.includes(pid)).length === 2, 15_000, 20, 'both processes to listen again');

    // Revocations are heard again: revoked through this process, refused by the other at once.
    expect((await read(b.url, key.key)).status).toBe(200);
    expect((await api(a, 'DELETE', `/v1/api-keys/${key.id}`)).status).toBe(200);
    expect((await read(b.url, key.key)).status).toBe(401);
    // And this process caches again.
    await keyInUse('after reconnect');
    expect(cache.size).toBeGreaterThan(0);
  });
});
