/**
 * Idempotency-Key on creating POSTs: the first answer replayed with `Idempotent-Replayed: true`,
 * another body refused with 422, concurrent duplicates creating exactly once (the others 409 or a
 * replay), a failed creation releasing the key, a claim its stopped process never answered taken over,
 * keys kept per workspace and expiring after 24 h.
 */
import { randomBytes } from 'node:crypto';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { createIntegration, databaseText, dataset, eventually, newKey, startHostedGateway, tempDir, type HostedGateway } from '../fine-tuning/harness';
import { gatewayFetch } from '../support/answers';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { api, type ApiResponse } from '../support/gateway';
import { storedNames } from '../files/helpers';
import { IDEMPOTENCY_CLAIM_LEASE_MS } from '../../src/modules/idempotency/idempotency.service';

const SECRET = `sk-fake-${randomBytes(12).toString('hex')}`;
const idem = (key: string) => ({ 'idempotency-key': key });
const newIdemKey = () => `idem-${randomBytes(6).toString('hex')}`;

let fake: FakeOpenAI;
let database: TestDatabase;
let data: { dir: string; remove(): Promise<void> };
let gw: HostedGateway;
let workspaceKey: { url: string; key: string };

beforeAll(async () => {
  fake = await startFakeOpenAI({ apiKey: SECRET });
  database = await createTestDatabase();
  data = await tempDir('gw-idem-');
  gw = await startHostedGateway({ fake, database, dataDir: data.dir, key: newKey() });
  await createIntegration(gw, 'openai', SECRET);
  const issued = await api(gw, 'POST', '/v1/api-keys', { body: { name: 'workspace key', workspace_id: 'default' } });
  expect(issued.status).toBe(200);
  workspaceKey = { url: gw.url, key: issued.body.key };
});
afterAll(async () => {
  await gw.stop();
  await database.drop();
  await data.remove();
  await fake.close();
});

async function upload(key: string, content: string, purpose = 'fine-tune', filename = 'train.jsonl'): Promise<ApiResponse> {
  const form = new FormData();
  form.append('purpose', purpose);
  form.append('file', new Blob([content]), filename);
  const res = await gatewayFetch(`${gw.url}/v1/files`, { method: 'POST', headers: { 'x-gateway-api-key': gw.key, ...idem(key) }, body: form });
  return { status: res.status, body: await res.json(), headers: res.headers };
}

/** Ten concurrent sends: exactly one creates; the others are 409 (still running) or replays of its answer. */
function expectOneCreation(answers: ApiResponse[]): ApiResponse {
  const created = answers.filter((a) => a.status === 200 && a.headers.get('idempotent-replayed') === null);
  expect(created).toHaveLength(1);
  for (const answer of answers) {
    if (answer.status === 200) expect(answer.body).toEqual(created[0].body);
    else {
      expect(answer).toMatchObject({ status: 409, body: { error: { type: 'conflict_error', code: 'idempotency_key_in_use' } } });
      expect(answer.headers.get('retry-after')).toBe('1');
    }
  }
  return created[0];
}

async function expectReplay(send: () => Promise<ApiResponse>, first: ApiResponse): Promise<void> {
  const again = await send();
  expect(again.status).toBe(first.status);
  expect(again.headers.get('idempotent-replayed')).toBe('true');
  expect(again.body).toEqual(first.body);
}

const labelCount = async (name: string) =>
  (await api(gw, 'GET', `/v1/labels?workspace_id=default&page_size=100&search=${name}`)).body.data.filter((l: any) => l.name === name).length;

describe('labels', () => {
  it('sent 10 times concurrently with one key: one label, every answer its own or a 409, replay identical', async () => {
    const key = newIdemKey();
    const send = () => api(gw, 'POST', '/v1/labels?workspace_id=default', { body: { name: 'once' }, headers: idem(key) });
    const first = expectOneCreation(await Promise.all(Array.from({ length: 10 }, send)));
    expect(await labelCount('once')).toBe(1);
    await expectReplay(send, first);
    expect(await labelCount('once')).toBe(1);
  });

  it('refuses the same key with another body (422) and creates nothing', async () => {
    const key = newIdemKey();
    expect((await api(gw, 'POST', '/v1/labels?workspace_id=default', { body: { name: 'first-body' }, headers: idem(key) })).status).toBe(200);
    const reused = await api(gw, 'POST', '/v1/labels?workspace_id=default', { body: { name: 'second-body' }, headers: idem(key) });
    expect(reused.status).toBe(422);
    expect(reused.body.error).toMatchObject({ type: 'invalid_request_error', code: 'idempotency_key_reused', param: 'Idempotency-Key' });
    expect(await labelCount('second-body')).toBe(0);
  });

  it('releases the key when the creation fails, so a corrected retry with it creates', async () => {
    const key = newIdemKey();
    const bad = await api(gw, 'POST', '/v1/labels?workspace_id=default', { body: { name: '' }, headers: idem(key) });
    expect(bad.status).toBe(400);
    const good = await api(gw, 'POST', '/v1/labels?workspace_id=default', { body: { name: 'after-failure' }, headers: idem(key) });
    expect(good.status).toBe(200);
    expect(good.headers.get('idempotent-replayed')).toBeNull();
    expect(await labelCount('after-failure')).toBe(1);
  });

  it('keeps keys per API key workspace: the same key from another scope creates its own', async () => {
    const key = newIdemKey();
    const fromOrg = await api(gw, 'POST', '/v1/labels?workspace_id=default', { body: { name: 'scoped' }, headers: idem(key) });
    const fromWorkspace = await api(workspaceKey, 'POST', '/v1/labels', { body: { name: 'scoped-2' }, headers: idem(key) });
    expect([fromOrg.status, fromWorkspace.status]).toEqual([200, 200]);
    expect(fromWorkspace.headers.get('idempotent-replayed')).toBeNull();
    expect(fromWorkspace.body.id).not.toBe(fromOrg.body.id);
  });

  it('forgets a key after 24 hours (expired rows are deleted lazily)', async () => {
    const key = newIdemKey();
    expect((await api(gw, 'POST', '/v1/labels?workspace_id=default', { body: { name: 'old-1' }, headers: idem(key) })).status).toBe(200);
    const prisma = gw.gateway.services.db.prisma;
    await prisma.idempotencyKey.updateMany({ where: { key }, data: { expiresAt: new Date(Date.now() - 1000) } });
    const later = await api(gw, 'POST', '/v1/labels?workspace_id=default', { body: { name: 'old-2' }, headers: idem(key) });
    expect(later.status).toBe(200);
    expect(later.headers.get('idempotent-replayed')).toBeNull();
    expect(await prisma.idempotencyKey.count({ where: { key } })).toBe(1);
  });

  it('takes over a key whose request never answered (its process stopped) once the claim lease has passed', async () => {
    const key = newIdemKey();
    const send = () => api(gw, 'POST', '/v1/labels?workspace_id=default', { body: { name: 'orphaned' }, headers: idem(key) });
    const first = await send();
    expect(first.status).toBe(200);
    const prisma = gw.gateway.services.db.prisma;
    // What a crash after claiming and before creating leaves: a claim with no answer, and no label.
    await prisma.label.delete({ where: { id: first.body.id } });
    const orphan = (ageMs: number) =>
      prisma.idempotencyKey.updateMany({ where: { key }, data: { status: null, response: null, createdAt: new Date(Date.now() - ageMs) } });
    await orphan(IDEMPOTENCY_CLAIM_LEASE_MS - 60_000);
    expect(await send()).toMatchObject({ status: 409, body: { error: { code: 'idempotency_key_in_use' } } });

    await orphan(IDEMPOTENCY_CLAIM_LEASE_MS + 60_000);
    const retried = await send();
    expect(retried.status).toBe(200);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
    expect(retried.body.id).not.toBe(first.body.id);
    expect(await labelCount('orphaned')).toBe(1);
    // The key now holds the retry's answer.
    await expectReplay(send, retried);
    expect(await prisma.idempotencyKey.count({ where: { key } })).toBe(1);
  });

  it('refuses an empty or overlong key with 400 and creates nothing', async () => {
    const long = await api(gw, 'POST', '/v1/labels?workspace_id=default', { body: { name: 'too-long-key' }, headers: idem('k'.repeat(256)) });
    expect(long.status).toBe(400);
    expect(long.body.error).toMatchObject({ code: 'invalid_idempotency_key', param: 'Idempotency-Key' });
    expect(await labelCount('too-long-key')).toBe(0);
  });
});

describe('files and fine-tuning jobs', () => {
  it('one upload for 10 concurrent sends of the same file and purpose; the rejected copies leave no bytes', async () => {
    const key = newIdemKey();
    const content = dataset(15);
    const first = expectOneCreation(await Promise.all(Array.from({ length: 10 }, () => upload(key, content))));
    await expectReplay(() => upload(key, content), first);
    const listed = (await api(gw, 'GET', '/v1/files?workspace_id=default&limit=100')).body.data.filter((f: any) => f.id === first.body.id);
    expect(listed).toHaveLength(1);
    const recorded = (await gw.gateway.services.db.prisma.file.findMany({ select: { storageKey: true } })).map((f) => f.storageKey).sort();
    expect(await storedNames(data.dir)).toEqual(recorded);
    // The same key with other bytes, or another purpose, is another request.
    expect((await upload(key, dataset(16))).status).toBe(422);
    expect((await upload(key, content, 'assistants')).status).toBe(422);
    expect(await storedNames(data.dir)).toEqual(recorded);
  });

  it('one job for 10 concurrent creates with one key, submitted to the provider once', async () => {
    const file = await upload(newIdemKey(), dataset(12));
    const key = newIdemKey();
    const body = { model: 'gpt-4o-mini', training_file: file.body.id, suffix: 'idem', gateway_options: { 'x-gateway-provider': '@openai' } };
    const send = () => api(gw, 'POST', '/v1/fine_tuning/jobs?workspace_id=default', { body, headers: idem(key) });
    const first = expectOneCreation(await Promise.all(Array.from({ length: 10 }, send)));
    await expectReplay(send, first);
    const jobs = (await api(gw, 'GET', '/v1/fine_tuning/jobs?workspace_id=default&limit=100')).body.data.filter((j: any) => j.training_file === file.body.id);
    expect(jobs).toHaveLength(1);
    expect(jobs[0].id).toBe(first.body.id);
    const submitted = () => [...fake.state.jobs.values()].filter((j) => j.metadata?.gateway_job_id === first.body.id);
    await eventually(async () => (submitted().length > 0 ? true : undefined));
    expect(submitted()).toHaveLength(1);
  });
});

describe('client mode', () => {
  const providerHeaders = { 'x-gateway-provider': 'openai', authorization: `Bearer ${SECRET}` };

  it('one provider job for 10 concurrent client-mode creates with one key; other credentials are another request', async () => {
    const form = new FormData();
    form.append('purpose', 'fine-tune');
    form.append('file', new Blob([dataset(13)]), 'cm.jsonl');
    const uploaded = await gatewayFetch(`${gw.url}/v1/files`, { method: 'POST', headers: { 'x-gateway-api-key': gw.key, ...providerHeaders }, body: form });
    const fileId = ((await uploaded.json()) as { id: string }).id;
    const key = newIdemKey();
    const body = { model: 'gpt-4o-mini', training_file: fileId };
    const send = () => api(gw, 'POST', '/v1/fine_tuning/jobs', { body, headers: { ...providerHeaders, ...idem(key) } });
    const first = expectOneCreation(await Promise.all(Array.from({ length: 10 }, send)));
    await expectReplay(send, first);
    expect([...fake.state.jobs.values()].filter((j) => j.training_file === fileId)).toHaveLength(1);
    const otherCredentials = await api(gw, 'POST', '/v1/fine_tuning/jobs', {
      body,
      headers: { ...providerHeaders, authorization: 'Bearer sk-other', ...idem(key) },
    });
    expect(otherCredentials.status).toBe(422);
  });

  it('refuses a key on a client-mode upload, which reaches the provider before its identity is known', async () => {
    const form = new FormData();
    form.append('purpose', 'fine-tune');
    form.append('file', new Blob([dataset(14)]), 'cm.jsonl');
    const res = await gatewayFetch(`${gw.url}/v1/files`, {
      method: 'POST',
      headers: { 'x-gateway-api-key': gw.key, ...providerHeaders, ...idem(newIdemKey()) },
      body: form,
    });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatchObject({ param: 'Idempotency-Key', code: 'unsupported_operation' });
    expect([...fake.state.files.values()].filter((f) => f.bytes === Buffer.byteLength(dataset(14)))).toHaveLength(0);
  });
});

describe('administration', () => {
  it('replays an issued API key identically while storing no secret in clear', async () => {
    const key = newIdemKey();
    const send = () => api(gw, 'POST', '/v1/api-keys', { body: { name: 'ci', workspace_id: 'default' }, headers: idem(key) });
    const first = await send();
    expect(first.status).toBe(200);
    await expectReplay(send, first);
    expect((await api(gw, 'GET', '/v1/api-keys')).body.data.filter((k: any) => k.name === 'ci')).toHaveLength(1);
    expect(await databaseText(gw)).not.toContain(first.body.key);
  });

  it('creates one workspace for concurrent duplicates', async () => {
    const key = newIdemKey();
    const send = () => api(gw, 'POST', '/v1/admin/workspaces', { body: { name: 'Idem', slug: 'idem' }, headers: idem(key) });
    const first = expectOneCreation(await Promise.all(Array.from({ length: 10 }, send)));
    await expectReplay(send, first);
    expect((await api(gw, 'GET', '/v1/admin/workspaces')).body.data.filter((w: any) => w.slug === 'idem')).toHaveLength(1);
  });

  it('does not apply to actions that create nothing', async () => {
    const key = newIdemKey();
    const res = await api(gw, 'POST', '/v1/fine_tuning/jobs/00000000-0000-0000-0000-000000000000/cancel?workspace_id=default', { headers: idem(key) });
    expect(res.status).toBe(404);
    expect(await gw.gateway.services.db.prisma.idempotencyKey.count({ where: { key } })).toBe(0);
  });
});
