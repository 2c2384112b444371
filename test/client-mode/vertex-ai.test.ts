/**
 * Client mode with Vertex AI through the gateway over HTTP, with the official OpenAI SDK, against the
 * fake Google Cloud: a service-account key in a header, in a stored integration (`@slug`), or the
 * caller's own access token; every files and fine-tuning route in OpenAI's shapes with gs:// URIs and
 * resource names as ids; one token exchange (its signature verified) for a whole sequence; hostile
 * or malformed settings refused with a 400 before any connection; nothing stored, no secret echoed.
 */
import type OpenAI from 'openai';
import { toFile } from 'openai';
import { createServiceAccount, type ServiceAccountKey } from '../fakes/google-auth';
import { startFakeVertex, type FakeVertex } from '../fakes/vertex-server';
import { dataset, example } from '../fine-tuning/harness';
import { gatewaySdk } from '../support/answers';
import { api, startTestGateway, type TestGateway } from '../support/gateway';
import { BUCKET, fakeEndpoints, vertexHeaders } from '../providers/vertex-ai.support';

let fake: FakeVertex;
let gw: TestGateway;

beforeAll(async () => {
  fake = await startFakeVertex();
  gw = await startTestGateway({ ...fakeEndpoints(fake), GATEWAY_PROVIDER_TIMEOUT_MS: '1500' });
});

afterAll(async () => {
  await gw.stop();
  await fake.close();
});

/** The OpenAI SDK in client mode: the gateway's key in a header, the provider's settings in others. */
function client(headers: Record<string, string>, apiKey = 'unused'): OpenAI {
  return gatewaySdk(gw, { apiKey, headers: { 'x-gateway-provider': 'vertex-ai', ...headers } });
}

/** A service account the fake's token endpoint knows, other than the one the other tests use (its own token cache entry). */
function newServiceAccount(name: string): ServiceAccountKey {
  const account = createServiceAccount(fake.projectId, fake.tokenUrl, name);
  fake.state.oauth.register(account);
  return account;
}

const exchangesOf = (account: ServiceAccountKey) => fake.state.oauth.requests.filter((r) => r.claims?.iss === account.client_email);

/** What the Gemini line of harness example `n` is. */
const geminiExample = (n: number) => ({
  systemInstruction: { parts: [{ text: 'You are terse.' }] },
  contents: [
    { role: 'user', parts: [{ text: `Question ${n}` }] },
    { role: 'model', parts: [{ text: `Answer ${n}` }] },
  ],
});

/** Upload → create → get → list → events → checkpoints → cancel → delete, checking OpenAI's shapes. */
async function exerciseEverything(sdk: OpenAI) {
  const uploaded = await sdk.files.create({ file: await toFile(Buffer.from(dataset(12)), 'train.jsonl'), purpose: 'fine-tune' });
  expect(uploaded).toMatchObject({
    id: expect.stringMatching(`^gs://${BUCKET}/gateway-files/`),
    object: 'file',
    filename: 'train.jsonl',
    purpose: 'fine-tune',
    status: 'processed',
  });
  const stored = fake.state.storage.buckets.get(BUCKET)!.get(uploaded.id.slice(`gs://${BUCKET}/`.length))!;
  expect(
    stored.data
      .toString('utf8')
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line)),
  ).toEqual(Array.from({ length: 12 }, (_, i) => geminiExample(i + 1)));
  const files = await sdk.files.list();
  expect(files.data.map((f) => f.id)).toContain(uploaded.id);
  // The last page: no page token, so last_id is the last file's id, as OpenAI answers.
  const listed = await (await sdk.files.list().asResponse()).json();
  expect(listed).toMatchObject({ has_more: false, first_id: files.data[0].id, last_id: files.data.at(-1)!.id });
  expect(await sdk.files.retrieve(uploaded.id)).toMatchObject({ id: uploaded.id, bytes: stored.data.length });
  expect(await (await sdk.files.content(uploaded.id)).text()).toBe(stored.data.toString('utf8'));

  const method = { type: 'supervised' as const, supervised: { hyperparameters: { n_epochs: 2 } } };
  const job = await sdk.fineTuning.jobs.create({ model: 'gemini-2.0-flash-001', training_file: uploaded.id, suffix: 'cm', method });
  expect(job).toMatchObject({
    object: 'fine_tuning.job',
    id: expect.stringMatching(/\/tuningJobs\/\d+$/),
    status: 'queued',
    model: 'gemini-2.0-flash-001',
    training_file: uploaded.id,
    suffix: 'cm',
    // The Google Cloud project the job runs in; Vertex AI takes no seed: 0.
    organization_id: fake.projectNumber,
    seed: 0,
  });
  expect((await sdk.fineTuning.jobs.list({ limit: 5 })).data.map((j) => j.id)).toContain(job.id);
  expect(await sdk.fineTuning.jobs.retrieve(job.id)).toMatchObject({ id: job.id, status: 'running' });
  const done = await sdk.fineTuning.jobs.retrieve(job.id);
  expect(done).toMatchObject({
    status: 'succeeded',
    fine_tuned_model: expect.stringMatching(/\/models\/\d+@1$/),
    trained_tokens: expect.any(Number),
    hyperparameters: { n_epochs: 2 },
  });
  const events = await sdk.fineTuning.jobs.listEvents(job.id);
  expect(events.data.map((e) => e.message)).toEqual([
    expect.stringContaining('Tuning succeeded'),
    'Tuning started',
    expect.stringContaining('Tuning job created'),
  ]);
  const checkpoints = await sdk.fineTuning.jobs.checkpoints.list(job.id);
  expect(checkpoints.data.map((c) => [c.object, c.step_number, c.fine_tuning_job_id])).toEqual([
    ['fine_tuning.job.checkpoint', 24, job.id],
    ['fine_tuning.job.checkpoint', 12, job.id],
  ]);

  const other = await sdk.fineTuning.jobs.create({ model: 'gemini-2.0-flash-001', training_file: uploaded.id });
  expect(await sdk.fineTuning.jobs.cancel(other.id)).toMatchObject({ id: other.id, status: 'cancelled', error: null });

  expect(await sdk.files.delete(uploaded.id)).toMatchObject({ id: uploaded.id, deleted: true });
  expect(fake.state.storage.buckets.get(BUCKET)!.has(stored.name)).toBe(false);
}

describe('client mode with Vertex AI', () => {
  it('forwards every call with the key file from a header, on one token exchange whose signature was verified', async () => {
    const account = newServiceAccount('header-key');
    await exerciseEverything(client({ ...vertexHeaders(fake), 'x-gateway-vertex-service-account-json': JSON.stringify(account) }));
    const exchanges = exchangesOf(account);
    expect(exchanges).toHaveLength(1);
    expect(exchanges[0]).toMatchObject({ header: { alg: 'RS256' }, claims: { aud: fake.tokenUrl } });
    expect(exchanges[0].error).toBeUndefined();
    // Stateless: nothing was stored by the gateway.
    expect((await api(gw, 'GET', '/v1/files')).body.data).toEqual([]);
    expect((await api(gw, 'GET', '/v1/fine_tuning/jobs')).body.data).toEqual([]);
  });

  it('works with a stored integration (@slug), ignoring the Authorization header the SDK always sends', async () => {
    const account = newServiceAccount('integration-key');
    const { 'x-gateway-vertex-service-account-json': _header, ...options } = vertexHeaders(fake);
    const created = await api(gw, 'POST', '/v1/integrations', {
      body: { slug: 'cm-vertex', provider: 'vertex-ai', credentials: { service_account_json: JSON.stringify(account) }, options },
    });
    expect(created.status).toBe(200);
    expect(JSON.stringify(created.body)).not.toContain(account.private_key_id);
    await exerciseEverything(client({ 'x-gateway-provider': '@cm-vertex' }, 'sk-not-a-google-token'));
    expect(exchangesOf(account)).toHaveLength(1);
  });

  it("uses the caller's own access token, with no exchange", async () => {
    const { 'x-gateway-vertex-service-account-json': _key, ...settings } = vertexHeaders(fake);
    const exchanges = fake.state.oauth.exchanges;
    const jobs = await client(settings, fake.issueToken()).fineTuning.jobs.list();
    expect(jobs.data.length).toBeGreaterThan(0);
    expect(fake.state.oauth.exchanges).toBe(exchanges);
  });

  it.each([
    ['x-gateway-vertex-region', 'us-central1.evil.com'],
    ['x-gateway-vertex-project-id', 'fake-project/../other'],
    ['x-gateway-vertex-storage-bucket-name', 'fake-bucket/o/x?'],
  ])('refuses %s %j with a 400 before any connection', async (header, hostile) => {
    const before = fake.state.requests.length;
    const res = await api(gw, 'GET', '/v1/files', { headers: { 'x-gateway-provider': 'vertex-ai', ...vertexHeaders(fake), [header]: hostile } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', param: header, code: 'invalid_setting' });
    expect(fake.state.requests.length).toBe(before);
  });

  it.each([
    ['not JSON', '{not json'],
    ['not a service-account key', JSON.stringify({ type: 'external_account' })],
    ['base64 of nonsense', Buffer.from('nonsense').toString('base64')],
  ])('refuses a key file that is %s with a 400 naming the header, never a 500', async (_case, value) => {
    const before = fake.state.requests.length;
    const res = await api(gw, 'GET', '/v1/fine_tuning/jobs', {
      headers: { 'x-gateway-provider': 'vertex-ai', ...vertexHeaders(fake), 'x-gateway-vertex-service-account-json': value },
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', param: 'x-gateway-vertex-service-account-json', code: 'invalid_setting' });
    expect(fake.state.requests.length).toBe(before);
  });

  it('refuses an integration whose key file is malformed when it is stored', async () => {
    const res = await api(gw, 'POST', '/v1/integrations', {
      body: {
        slug: 'bad-vertex',
        provider: 'vertex-ai',
        credentials: { service_account_json: '{"type":"service_account"}' },
        options: { 'x-gateway-vertex-project-id': 'p-123456', 'x-gateway-vertex-region': 'us-central1' },
      },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain('client_email is missing');
  });

  it("relays Vertex's errors in the gateway's shape, and a dataset line it cannot convert as a 400 naming the line", async () => {
    const sdk = client(vertexHeaders(fake));
    const missing = await api(gw, 'GET', `/v1/fine_tuning/jobs/${encodeURIComponent(`projects/${fake.projectId}/locations/${fake.location}/tuningJobs/42`)}`, {
      headers: { 'x-gateway-provider': 'vertex-ai', ...vertexHeaders(fake) },
    });
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatchObject({ type: 'provider_error', code: 'NOT_FOUND' });
    const bad = `${example(1)}\n${JSON.stringify({ messages: [{ role: 'user', content: 'only a question' }] })}\n`;
    const refused = await sdk.files.create({ file: await toFile(Buffer.from(bad), 'bad.jsonl'), purpose: 'fine-tune' }).catch((e: unknown) => e);
    expect(refused).toMatchObject({
      status: 400,
      error: { code: 'invalid_dataset', message: expect.stringContaining('line 2: the last message must be from the assistant') },
    });
  });
});
