/**
 * Two gateway processes on one Postgres database, each caching hosted chat's resolution (`model` →
 * job → integration → credentials) and partial texts: a change made through one process, or by plain
 * SQL, is in force in both from the next request on: a deleted integration, a rotated credential, a
 * cancelled or deleted job stop serving; a changed partial text is served.
 */
import { Client } from 'pg';
import type OpenAI from 'openai';
import { handledChannel } from '../../src/db/notifications';
import { API_KEY_CHANNEL } from '../../src/modules/api-keys/api-key.cache';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { createIntegration, createTestDatabase, MASTER_KEY, newKey, sdk, startHostedGateway, tempDir, type HostedGateway } from '../fine-tuning/harness';
import { adminQuery } from '../support/database';
import { api } from '../support/gateway';
import { describeOnPostgres, spawnReplica, type GatewayProcess } from '../support/gateway-process';
import { succeededJob } from './harness';

const SECRET = 'sk-replicated-fake-key';
describeOnPostgres('hosted chat cache invalidation across two gateway processes on one Postgres', () => {
  let fake: FakeOpenAI;
  let a: HostedGateway;
  let b: GatewayProcess & { key: string };
  let data: { dir: string; remove(): Promise<void> };
  let client: OpenAI;
  let jobs: Array<{ id: string; model: string }>;
  let partialId: string;

  beforeAll(async () => {
    fake = await startFakeOpenAI({ apiKey: SECRET });
    data = await tempDir('gw-hosted-replicas-');
    a = await startHostedGateway({ fake, database: await createTestDatabase(), dataDir: data.dir, key: newKey() });
    const shared = { databaseUrl: a.database.databaseUrl!, dataDir: data.dir, key: a.key, masterKey: MASTER_KEY, openaiUrl: fake.url };
    b = { ...(await spawnReplica(shared)), key: a.key };
    client = sdk(a);
    await createIntegration(a, 'replicated', SECRET);
    jobs = await Promise.all([0, 1].map(() => succeededJob(client, '@replicated')));
    const partial = await api(a, 'POST', '/v1/prompts/partials', { body: { name: 'Tone', string: 'Be brief.' } });
    partialId = partial.body.id;
  }, 120_000);

  afterAll(async () => {
    await b?.stop();
    await a?.stop();
    await a?.database.drop();
    await fake?.close();
    await data?.remove();
  });

  const chat = (gw: { url: string; key: string }, model: string, content = 'Hi') =>
    api(gw, 'POST', '/v1/chat/completions', { body: { model, messages: [{ role: 'user', content }] } });

  /** Both processes answer `model` (from memory from the second call on). */
  async function warm(model: string, content?: string) {
    for (const gw of [a, b, a, b]) expect((await chat(gw, model, content)).status).toBe(200);
  }

  /** Runs `sql` as a third party would, resolving once both processes have handled the database's announcement. */
  async function bySql(sql: string, params: unknown[]) {
    const listener = new Client({ connectionString: a.database.databaseUrl! });
    await listener.connect();
    try {
      const handledBy = new Set<number>();
      const handled = new Promise<void>((resolve) =>
        listener.on('notification', ({ payload, processId }) => {
          if (payload?.startsWith('hosted:')) handledBy.add(processId);
          if (handledBy.size === 2) resolve();
        }),
      );
      await listener.query(`LISTEN ${handledChannel(API_KEY_CHANNEL)}`);
      await adminQuery(a.database.databaseUrl!, sql, params);
      await handled;
    } finally {
      await listener.end();
    }
  }

  it('serves a partial text changed through the other process from the next request on', async () => {
    await warm(jobs[0].model, '{{>tone}}');
    expect((await api(b, 'PUT', `/v1/prompts/partials/${partialId}`, { body: { string: 'Be very brief.' } })).status).toBe(200);
    expect((await api(b, 'PUT', `/v1/prompts/partials/${partialId}/makeDefault`, { body: { version: 2 } })).status).toBe(200);
    for (const gw of [a, b]) {
      expect((await chat(gw, jobs[0].model, '{{>tone}}')).status).toBe(200);
      expect(fake.state.chatRequests.at(-1)!.body.messages).toEqual([{ role: 'user', content: 'Be very brief.' }]);
    }
  });

  it('uses a credential rotated through one process in both from the next request on', async () => {
    await warm(jobs[0].model);
    expect((await api(a, 'PATCH', '/v1/integrations/replicated', { body: { credentials: { api_key: 'sk-rotated-wrong' } } })).status).toBe(200);
    for (const gw of [b, a]) expect((await chat(gw, jobs[0].model)).status).not.toBe(200);
    expect((await api(b, 'PATCH', '/v1/integrations/replicated', { body: { credentials: { api_key: SECRET } } })).status).toBe(200);
    for (const gw of [a, b]) expect((await chat(gw, jobs[0].model)).status).toBe(200);
  });

  it('stops serving a job cancelled, then deleted, by plain SQL in both processes', async () => {
    await warm(jobs[1].model);
    await bySql(`UPDATE fine_tuning_jobs SET status = 'cancelled' WHERE id = $1`, [jobs[1].id]);
    for (const gw of [a, b]) expect((await chat(gw, jobs[1].model)).status).toBe(404);
    // A job that was not serving is cached nowhere: bringing it back announces nothing.
    await adminQuery(a.database.databaseUrl!, `UPDATE fine_tuning_jobs SET status = 'succeeded' WHERE id = $1`, [jobs[1].id]);
    await warm(jobs[1].model);
    await bySql('DELETE FROM fine_tuning_jobs WHERE id = $1', [jobs[1].id]);
    for (const gw of [a, b]) expect((await chat(gw, jobs[1].model)).status).toBe(404);
  });

  it('stops serving a deleted integration in both processes from the next request on', async () => {
    await warm(jobs[0].model);
    expect((await api(b, 'DELETE', '/v1/integrations/replicated')).status).toBe(200);
    for (const gw of [a, b]) {
      const res = await chat(gw, jobs[0].model);
      expect(res.status).toBe(404);
      expect(res.body.error.message).toContain('replicated');
    }
  });
});
