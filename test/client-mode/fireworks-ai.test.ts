/**
 * Client mode (x-gateway-provider: fireworks-ai) through the gateway with the official OpenAI SDK,
 * against the fake Fireworks: every files and fine-tuning route with the key in `Authorization` and
 * the account in `x-gateway-fireworks-account-id`, and through a stored integration (`@slug`); cancel
 * answered `unsupported_operation`; hostile account ids refused before any connection; provider errors
 * mapped; nothing stored and no key echoed.
 */
import OpenAI, { toFile } from 'openai';
import { startFakeFireworks, type FakeFireworks } from '../fakes/fireworks-server';
import { dataset } from '../fine-tuning/harness';
import { gatewaySdk } from '../support/answers';
import { api, startTestGateway, type TestGateway } from '../support/gateway';

const KEY = 'fw-client-mode-0123456789abcdef';
const ACCOUNT = 'acme-labs';
const BASE = 'llama-v3p1-8b-instruct';
const HEADERS = { 'x-gateway-provider': 'fireworks-ai', 'x-gateway-fireworks-account-id': ACCOUNT };

let fake: FakeFireworks;
let gw: TestGateway;

beforeAll(async () => {
  fake = await startFakeFireworks({ apiKey: KEY, accountId: ACCOUNT, runningPolls: 2 });
  gw = await startTestGateway({ GATEWAY_FIREWORKS_BASE_URL: fake.origin, GATEWAY_PROVIDER_TIMEOUT_MS: '1500' });
});

afterAll(async () => {
  await gw.stop();
  await fake.close();
});

function client(headers: Record<string, string>, apiKey = 'unused'): OpenAI {
  return gatewaySdk(gw, { apiKey, headers });
}

async function exerciseEverything(sdk: OpenAI) {
  const content = dataset(12);
  const uploaded = await sdk.files.create({ file: await toFile(Buffer.from(content), 'train.jsonl'), purpose: 'fine-tune' });
  expect(uploaded).toMatchObject({
    id: expect.stringMatching(/^train-[0-9a-f]{8}$/),
    object: 'file',
    bytes: content.length,
    filename: 'train.jsonl',
    status: 'processed',
  });
  expect(fake.state.datasetFiles.get(uploaded.id)?.get('train.jsonl')?.content?.toString()).toBe(content);
  const files = await sdk.files.list();
  expect(files.data.map((f) => f.id)).toContain(uploaded.id);
  // The last page: no page token, so last_id is the last file's id, as OpenAI answers.
  const listed = await (await sdk.files.list().asResponse()).json();
  expect(listed).toMatchObject({ has_more: false, first_id: files.data[0].id, last_id: files.data.at(-1)!.id });
  expect(await sdk.files.retrieve(uploaded.id)).toMatchObject({ id: uploaded.id, object: 'file', purpose: 'fine-tune', filename: 'train.jsonl' });
  expect(await (await sdk.files.content(uploaded.id)).text()).toBe(content);

  const job = await sdk.fineTuning.jobs.create({
    model: BASE,
    training_file: uploaded.id,
    suffix: 'cm',
    method: { type: 'supervised', supervised: { hyperparameters: { n_epochs: 2 } } },
    provider_options: { learning_rate: 0.0003 },
  } as OpenAI.FineTuning.JobCreateParams);
  expect(job).toMatchObject({
    object: 'fine_tuning.job',
    model: `accounts/fireworks/models/${BASE}`,
    training_file: uploaded.id,
    status: 'queued',
    suffix: 'cm',
    // The Fireworks account; Fireworks takes no seed: 0.
    organization_id: ACCOUNT,
    seed: 0,
  });
  expect(fake.state.jobs.get(job.id)).toMatchObject({
    epochs: 2,
    learningRate: 0.0003,
    displayName: 'cm',
    dataset: `accounts/${ACCOUNT}/datasets/${uploaded.id}`,
  });

  expect((await sdk.fineTuning.jobs.list({ limit: 5 })).data.map((j) => j.id)).toContain(job.id);
  let current = await sdk.fineTuning.jobs.retrieve(job.id);
  for (let i = 0; i < 10 && current.status !== 'succeeded'; i++) current = await sdk.fineTuning.jobs.retrieve(job.id);
  const outputModel = fake.state.jobs.get(job.id)?.outputModel;
  expect(outputModel).toMatch(new RegExp(`^accounts/${ACCOUNT}/models/cm-[0-9a-f]{8}$`));
  expect(current).toMatchObject({ id: job.id, status: 'succeeded', fine_tuned_model: outputModel, finished_at: expect.any(Number) });

  const events = await sdk.fineTuning.jobs.listEvents(job.id, { limit: 50 });
  expect(events.data[0]).toMatchObject({
    object: 'fine_tuning.job.event',
    id: `${job.id}-state-job_state_completed`,
    message: `Job completed: output model ${outputModel}`,
  });
  const checkpoints = await sdk.fineTuning.jobs.checkpoints.list(job.id);
  expect(checkpoints.data).toEqual([
    expect.objectContaining({ object: 'fine_tuning.job.checkpoint', fine_tuning_job_id: job.id, fine_tuned_model_checkpoint: outputModel }),
  ]);

  const cancel = await sdk.fineTuning.jobs.cancel(job.id).catch((err: unknown) => err);
  expect(cancel).toBeInstanceOf(OpenAI.BadRequestError);
  expect(cancel).toMatchObject({ status: 400, code: 'unsupported_operation', type: 'invalid_request_error' });

  expect(await sdk.files.delete(uploaded.id)).toMatchObject({ id: uploaded.id, deleted: true });
  expect(fake.state.datasets.has(uploaded.id)).toBe(false);
}

describe('client mode with Fireworks AI', () => {
  it('forwards every files and fine-tuning call with the key from Authorization, storing nothing', async () => {
    await exerciseEverything(client(HEADERS, KEY));
    const control = fake.state.requests.filter((r) => r.path.startsWith('/v1/'));
    expect(control.every((r) => r.headers.authorization === `Bearer ${KEY}` && r.path.startsWith(`/v1/accounts/${ACCOUNT}/`))).toBe(true);
    expect(fake.state.requests.some((r) => r.method === 'DELETE' && r.path.includes('supervisedFineTuningJobs'))).toBe(false);
    expect((await api(gw, 'GET', '/v1/files')).body.data).toEqual([]);
    expect((await api(gw, 'GET', '/v1/fine_tuning/jobs')).body.data).toEqual([]);
  });

  it('works with a stored integration (@slug) holding the account id', async () => {
    const created = await api(gw, 'POST', '/v1/integrations', {
      body: { slug: 'cm-fireworks', provider: 'fireworks-ai', credentials: { api_key: KEY }, options: { 'x-gateway-fireworks-account-id': ACCOUNT } },
    });
    expect(created.status).toBe(200);
    await exerciseEverything(client({ 'x-gateway-provider': '@cm-fireworks' }, 'not-the-real-key'));
  });

  it("pages lists with Fireworks' page token as the cursor", async () => {
    const sdk = client(HEADERS, KEY);
    for (let i = 0; i < 2; i++) await sdk.files.create({ file: await toFile(Buffer.from(dataset(10)), `p${i}.jsonl`), purpose: 'fine-tune' });
    const first = await api(gw, 'GET', '/v1/files?limit=1', { headers: { ...HEADERS, authorization: `Bearer ${KEY}` } });
    expect(first.body).toMatchObject({ has_more: true, data: [{ filename: 'p1.jsonl' }] });
    const next = await api(gw, 'GET', `/v1/files?limit=1&after=${encodeURIComponent(first.body.last_id)}`, {
      headers: { ...HEADERS, authorization: `Bearer ${KEY}` },
    });
    expect(next.body.data).toMatchObject([{ filename: 'p0.jsonl' }]);
  });

  it('refuses learning_rate_multiplier and DPO with 400 naming the field, before any request', async () => {
    const before = fake.state.requests.length;
    const headers = { ...HEADERS, authorization: `Bearer ${KEY}` };
    const multiplier = await api(gw, 'POST', '/v1/fine_tuning/jobs', {
      headers,
      body: { model: BASE, training_file: 'x', hyperparameters: { learning_rate_multiplier: 2 } },
    });
    expect(multiplier.status).toBe(400);
    expect(multiplier.body.error).toMatchObject({ param: 'hyperparameters.learning_rate_multiplier', code: 'unsupported_parameter' });
    const dpo = await api(gw, 'POST', '/v1/fine_tuning/jobs', { headers, body: { model: BASE, training_file: 'x', method: { type: 'dpo' } } });
    expect(dpo.status).toBe(400);
    expect(dpo.body.error.param).toBe('method.type');
    expect(fake.state.requests.length).toBe(before);
  });

  it.each(['evil.com/x', 'a@b', 'a:1', 'a.b', 'a%2fb', 'x'.repeat(300)])('refuses the account id %j before any connection', async (hostile) => {
    const before = fake.state.requests.length;
    const res = await api(gw, 'GET', '/v1/fine_tuning/jobs', {
      headers: { ...HEADERS, authorization: `Bearer ${KEY}`, 'x-gateway-fireworks-account-id': hostile },
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', param: 'x-gateway-fireworks-account-id' });
    expect(fake.state.requests.length).toBe(before);
  });

  it('refuses a missing account id or key with 400 naming the header', async () => {
    const noAccount = await api(gw, 'GET', '/v1/files', { headers: { 'x-gateway-provider': 'fireworks-ai', authorization: `Bearer ${KEY}` } });
    expect(noAccount.body.error).toMatchObject({ param: 'x-gateway-fireworks-account-id', code: 'missing_setting' });
    const noKey = await api(gw, 'GET', '/v1/files', { headers: HEADERS });
    expect(noKey.body.error).toMatchObject({ param: 'authorization', code: 'missing_setting' });
  });

  it('maps provider errors: 401 (key never echoed), 403 for another account, 404, 500 → 502, time-out → 504', async () => {
    const headers = { ...HEADERS, authorization: `Bearer ${KEY}` };
    const wrongKey = await api(gw, 'GET', '/v1/fine_tuning/jobs', { headers: { ...headers, authorization: 'Bearer fw-wrong-9876543210' } });
    expect(wrongKey.status).toBe(401);
    expect(wrongKey.body.error).toMatchObject({ type: 'provider_error', message: 'Fireworks AI: unauthenticated: invalid API key' });
    expect(JSON.stringify(wrongKey.body)).not.toContain('fw-wrong-9876543210');
    expect((await api(gw, 'GET', '/v1/files', { headers: { ...headers, 'x-gateway-fireworks-account-id': 'someone-else' } })).status).toBe(403);
    expect((await api(gw, 'GET', '/v1/fine_tuning/jobs/missing-job', { headers })).status).toBe(404);
    fake.failNext('GET', `/v1/accounts/${ACCOUNT}/supervisedFineTuningJobs`, 500, { times: 3, message: `boom ${KEY}` });
    const broken = await api(gw, 'GET', '/v1/fine_tuning/jobs', { headers });
    expect(broken.status).toBe(502);
    expect(JSON.stringify(broken.body)).not.toContain(KEY);
    fake.delayNext('GET', `/v1/accounts/${ACCOUNT}/supervisedFineTuningJobs`, 3_000, 3);
    expect((await api(gw, 'GET', '/v1/fine_tuning/jobs', { headers })).status).toBe(504);
  });

  it('passes a fine-tuned model without a deployment on to Fireworks, relaying its 404 with what to do', async () => {
    const model = `accounts/${ACCOUNT}/models/my-tuned-model`;
    const before = fake.state.chatRequests.length;
    const res = await api(gw, 'POST', '/v1/chat/completions', {
      headers: { ...HEADERS, authorization: `Bearer ${KEY}` },
      body: { model, messages: [{ role: 'user', content: 'Hi' }] },
    });
    expect(fake.state.chatRequests.slice(before)).toEqual([expect.objectContaining({ model })]);
    expect(res.status).toBe(404);
    expect(res.body.error).toMatchObject({ type: 'provider_error', code: 'NOT_FOUND', param: 'model' });
    expect(res.body.error.message).toMatch(/^Fireworks AI: Model not found, inaccessible, and\/or not deployed \(.*x-gateway-fireworks-deployment\)$/);
  });
});
