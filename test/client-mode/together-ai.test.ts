/**
 * Client mode (x-gateway-provider: together-ai) through the gateway with the official OpenAI SDK,
 * against the fake Together: every files and fine-tuning route with the key in `Authorization` and
 * through a stored integration (`@slug`), cancel, what Together cannot take refused naming the field,
 * provider errors mapped, nothing stored and no key echoed.
 */
import type OpenAI from 'openai';
import { toFile } from 'openai';
import { startFakeTogether, type FakeTogether } from '../fakes/together-server';
import { dataset } from '../fine-tuning/harness';
import { gatewaySdk } from '../support/answers';
import { api, startTestGateway, type TestGateway } from '../support/gateway';

const KEY = 'tg-client-mode-0123456789abcdef';
const BASE = 'meta-llama/Meta-Llama-3.1-8B-Instruct-Reference';

let fake: FakeTogether;
let gw: TestGateway;

beforeAll(async () => {
  fake = await startFakeTogether({ apiKey: KEY, userId: 'acme' });
  gw = await startTestGateway({ GATEWAY_TOGETHER_BASE_URL: fake.url, GATEWAY_PROVIDER_TIMEOUT_MS: '1500' });
});

afterAll(async () => {
  await gw.stop();
  await fake.close();
});

function client(headers: Record<string, string>, apiKey = 'unused'): OpenAI {
  return gatewaySdk(gw, { apiKey, headers });
}

const direct = () => client({ 'x-gateway-provider': 'together-ai' }, KEY);

async function exerciseEverything(sdk: OpenAI) {
  const content = dataset(12);
  const uploaded = await sdk.files.create({ file: await toFile(Buffer.from(content), 'train.jsonl'), purpose: 'fine-tune' });
  expect(uploaded).toMatchObject({
    id: expect.stringMatching(/^file-/),
    object: 'file',
    bytes: content.length,
    filename: 'train.jsonl',
    purpose: 'fine-tune',
    // Together's PENDING (then RUNNING) validation is OpenAI's `uploaded`.
    status: 'uploaded',
  });
  expect(fake.state.fileContents.get(uploaded.id)?.toString()).toBe(content);
  expect((await sdk.files.list()).data.map((f) => f.id)).toContain(uploaded.id);
  expect(await sdk.files.retrieve(uploaded.id)).toMatchObject({ id: uploaded.id, object: 'file', status: 'uploaded' });
  expect(await (await sdk.files.content(uploaded.id)).text()).toBe(content);

  const job = await sdk.fineTuning.jobs.create({
    model: BASE,
    training_file: uploaded.id,
    suffix: 'cm',
    method: { type: 'supervised', supervised: { hyperparameters: { n_epochs: 2, batch_size: 4 } } },
    provider_options: { learning_rate: 0.0003 },
  } as OpenAI.FineTuning.JobCreateParams);
  expect(job).toMatchObject({
    object: 'fine_tuning.job',
    id: expect.stringMatching(/^ft-/),
    model: BASE,
    training_file: uploaded.id,
    status: 'queued',
    suffix: 'cm',
    // Together names no owner: the caller's gateway organisation. No seed was sent: 0.
    organization_id: (await api(gw, 'GET', '/v1/admin/workspaces')).body.data[0].organisation_id,
    seed: 0,
  });
  expect(fake.state.fineTuneRequests.at(-1)).toMatchObject({ n_epochs: 2, batch_size: 4, learning_rate: 0.0003, suffix: 'cm' });

  expect((await sdk.fineTuning.jobs.list({ limit: 5 })).data.map((j) => j.id)).toContain(job.id);
  let current = await sdk.fineTuning.jobs.retrieve(job.id);
  for (let i = 0; i < 10 && current.status !== 'succeeded'; i++) current = await sdk.fineTuning.jobs.retrieve(job.id);
  expect(current).toMatchObject({
    id: job.id,
    status: 'succeeded',
    fine_tuned_model: fake.state.jobs.get(job.id)?.model_output_name,
    finished_at: expect.any(Number),
  });
  expect(current.hyperparameters).toMatchObject({ n_epochs: 2, batch_size: 4 });

  const events = await sdk.fineTuning.jobs.listEvents(job.id, { limit: 50 });
  expect(events.data[0]).toMatchObject({
    object: 'fine_tuning.job.event',
    id: expect.stringMatching(/^ftevent-/),
    message: expect.stringMatching(/^Job finished/),
  });
  expect(events.data.some((e) => e.type === 'metrics')).toBe(true);
  const checkpoints = await sdk.fineTuning.jobs.checkpoints.list(job.id);
  expect(checkpoints.data[0]).toMatchObject({
    object: 'fine_tuning.job.checkpoint',
    fine_tuning_job_id: job.id,
    fine_tuned_model_checkpoint: `${job.id}:6`,
    step_number: 6,
  });

  const other = await sdk.fineTuning.jobs.create({ model: BASE, training_file: uploaded.id, seed: 42 });
  expect(fake.state.fineTuneRequests.at(-1)).toMatchObject({ random_seed: 42 });
  // Together stops a job asynchronously: `cancel_requested` reads running until it is cancelled.
  expect(await sdk.fineTuning.jobs.cancel(other.id)).toMatchObject({ id: other.id, status: 'running', seed: 42 });
  expect(await sdk.fineTuning.jobs.retrieve(other.id)).toMatchObject({ status: 'cancelled' });

  expect(await sdk.files.delete(uploaded.id)).toMatchObject({ id: uploaded.id, deleted: true });
  return job;
}

describe('client mode with Together AI', () => {
  it('forwards every files and fine-tuning call with the key from Authorization, storing nothing', async () => {
    await exerciseEverything(direct());
    expect(fake.state.requests.filter((r) => r.path.startsWith('/v1/')).every((r) => r.headers.authorization === `Bearer ${KEY}`)).toBe(true);
    expect((await api(gw, 'GET', '/v1/files')).body.data).toEqual([]);
    expect((await api(gw, 'GET', '/v1/fine_tuning/jobs')).body.data).toEqual([]);
  });

  it('works with a stored integration (@slug), ignoring the Authorization header the SDK always sends', async () => {
    const created = await api(gw, 'POST', '/v1/integrations', { body: { slug: 'cm-together', provider: 'together-ai', credentials: { api_key: KEY } } });
    expect(created.status).toBe(200);
    await exerciseEverything(client({ 'x-gateway-provider': '@cm-together' }, 'not-the-real-key'));
  });

  it('pages the job list with the last id as cursor', async () => {
    const page = await direct().fineTuning.jobs.list({ limit: 1 });
    expect(page.data).toHaveLength(1);
    expect(page.has_more).toBe(true);
    const next = await direct().fineTuning.jobs.list({ limit: 1, after: page.data[0].id });
    expect(next.data[0].id).not.toBe(page.data[0].id);
  });

  it('refuses learning_rate_multiplier and an unknown training type with 400 naming the field, before any request', async () => {
    const before = fake.state.fineTuneRequests.length;
    const multiplier = await api(gw, 'POST', '/v1/fine_tuning/jobs', {
      headers: { 'x-gateway-provider': 'together-ai', authorization: `Bearer ${KEY}` },
      body: { model: BASE, training_file: 'file-x', method: { type: 'supervised', supervised: { hyperparameters: { learning_rate_multiplier: 2 } } } },
    });
    expect(multiplier.status).toBe(400);
    expect(multiplier.body.error).toMatchObject({ param: 'method.supervised.hyperparameters.learning_rate_multiplier', code: 'unsupported_parameter' });
    expect(multiplier.body.error.message).toContain('provider_options.learning_rate');
    const type = await api(gw, 'POST', '/v1/fine_tuning/jobs', {
      headers: { 'x-gateway-provider': 'together-ai', authorization: `Bearer ${KEY}` },
      body: { model: BASE, training_file: 'file-x', provider_options: { training_type: 'qlora' } },
    });
    expect(type.status).toBe(400);
    expect(type.body.error.param).toBe('provider_options.training_type');
    expect(fake.state.fineTuneRequests).toHaveLength(before);
  });

  it('maps provider errors: 401 (key never echoed), 404, 429, 500 → 502, time-out → 504', async () => {
    const headers = { 'x-gateway-provider': 'together-ai', authorization: `Bearer ${KEY}` };
    const wrongKey = await api(gw, 'GET', '/v1/fine_tuning/jobs', { headers: { ...headers, authorization: 'Bearer tg-wrong-9876543210' } });
    expect(wrongKey.status).toBe(401);
    expect(wrongKey.body.error).toMatchObject({ type: 'provider_error', code: 'invalid_api_key' });
    expect(JSON.stringify(wrongKey.body)).not.toContain('tg-wrong-9876543210');
    expect((await api(gw, 'GET', '/v1/fine_tuning/jobs/ft-missing', { headers })).status).toBe(404);
    fake.failNext('GET', '/v1/fine-tunes', 429, { times: 3, retryAfter: '0' });
    expect((await api(gw, 'GET', '/v1/fine_tuning/jobs', { headers })).status).toBe(429);
    fake.failNext('GET', '/v1/fine-tunes', 500, { times: 3, message: `boom ${KEY}` });
    const broken = await api(gw, 'GET', '/v1/fine_tuning/jobs', { headers });
    expect(broken.status).toBe(502);
    expect(JSON.stringify(broken.body)).not.toContain(KEY);
    fake.delayNext('GET', '/v1/fine-tunes', 3_000, 3);
    expect((await api(gw, 'GET', '/v1/fine_tuning/jobs', { headers })).status).toBe(504);
  });

  it('refuses a missing key with 400 naming the header, before any request', async () => {
    const before = fake.state.requests.length;
    const res = await api(gw, 'GET', '/v1/files', { headers: { 'x-gateway-provider': 'together-ai' } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ param: 'authorization', code: 'missing_setting' });
    expect(fake.state.requests.length).toBe(before);
  });
});
