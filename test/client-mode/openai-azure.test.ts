/**
 * Client mode (x-gateway-provider) through the gateway with the official OpenAI SDK, against the fake
 * OpenAI and the fake Azure OpenAI: every files and fine-tuning route, with the provider's key in
 * `Authorization` and through a stored integration (`@slug`); hostile settings refused before any
 * connection; provider errors mapped; nothing stored and no credential echoed or logged.
 */
import type OpenAI from 'openai';
import { toFile } from 'openai';
import { AZURE_TEST_API_KEY, startFakeAzureOpenAI, type FakeAzureOpenAI } from '../fakes/azure-openai-server';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { createAzureIntegration, dataset } from '../fine-tuning/harness';
import { gatewaySdk } from '../support/answers';
import { api, startTestGateway, type TestGateway } from '../support/gateway';

const OPENAI_KEY = 'sk-client-mode-0123456789abcdef';

let openaiFake: FakeOpenAI;
let azureFake: FakeAzureOpenAI;
let gw: TestGateway;

beforeAll(async () => {
  openaiFake = await startFakeOpenAI({ apiKey: OPENAI_KEY });
  azureFake = await startFakeAzureOpenAI({ stepsPerPoll: 1 });
  gw = await startTestGateway({
    GATEWAY_OPENAI_BASE_URL: openaiFake.url,
    GATEWAY_AZURE_OPENAI_BASE_URL: azureFake.baseUrlTemplate,
    GATEWAY_PROVIDER_TIMEOUT_MS: '1500',
  });
});

afterAll(async () => {
  await gw.stop();
  await openaiFake.close();
  await azureFake.close();
});

/** The OpenAI SDK in client mode: the provider's key as the SDK's apiKey, the gateway's in a header. */
function client(headers: Record<string, string>, apiKey = 'unused'): OpenAI {
  return gatewaySdk(gw, { apiKey, headers });
}

const AZURE_HEADERS = { 'x-gateway-provider': 'azure-openai', 'x-gateway-azure-resource-name': 'fake-aoai' };

async function fileCount(): Promise<number> {
  return (await api(gw, 'GET', '/v1/files')).body.data.length;
}

/** The whole files and fine-tuning surface through one client; returns what the provider saw. */
/** What differs between the two providers' answers: the file status right after an upload, and whose the jobs are. */
interface Expected {
  fileStatus: string;
  organization: string | RegExp;
}

async function exerciseEverything(sdk: OpenAI, expected: Expected) {
  const content = dataset(12);
  const uploaded = await sdk.files.create({ file: await toFile(Buffer.from(content), 'train.jsonl'), purpose: 'fine-tune' });
  expect(uploaded).toMatchObject({
    id: expect.stringMatching(/^file-/),
    object: 'file',
    // The bytes the gateway streamed, also where the provider does not say yet (Azure).
    bytes: Buffer.byteLength(content),
    filename: 'train.jsonl',
    purpose: 'fine-tune',
    status: expected.fileStatus,
  });

  const listed = await sdk.files.list();
  expect(listed.data.map((f) => f.id)).toContain(uploaded.id);
  // Azure processes a file before a job may use it: retrieving it moves the fake on.
  expect(await sdk.files.retrieve(uploaded.id)).toMatchObject({ id: uploaded.id, object: 'file' });
  expect(await (await sdk.files.content(uploaded.id)).text()).toBe(content);

  const job = await sdk.fineTuning.jobs.create({
    model: 'gpt-4o-mini-2024-07-18',
    training_file: uploaded.id,
    suffix: 'cm',
    method: { type: 'supervised', supervised: { hyperparameters: { n_epochs: 2 } } },
  });
  expect(job).toMatchObject({
    object: 'fine_tuning.job',
    model: 'gpt-4o-mini-2024-07-18',
    training_file: uploaded.id,
    organization_id: expect.stringMatching(expected.organization),
    seed: expect.any(Number),
    // What nobody chose reads "auto" (Azure answers -1 there).
    hyperparameters: { n_epochs: 2, batch_size: 'auto', learning_rate_multiplier: 'auto' },
  });
  expect(['validating_files', 'queued']).toContain(job.status);

  const jobs = await sdk.fineTuning.jobs.list({ limit: 5 });
  expect(jobs.data.map((j) => j.id)).toContain(job.id);
  let current = await sdk.fineTuning.jobs.retrieve(job.id);
  for (let i = 0; i < 5 && current.status !== 'succeeded'; i++) current = await sdk.fineTuning.jobs.retrieve(job.id);
  expect(current).toMatchObject({ id: job.id, status: 'succeeded', fine_tuned_model: expect.any(String) });

  const events = await sdk.fineTuning.jobs.listEvents(job.id, { limit: 50 });
  expect(events.data.length).toBeGreaterThan(0);
  expect(events.data[0]).toMatchObject({ object: 'fine_tuning.job.event', id: expect.any(String), created_at: expect.any(Number) });
  const checkpoints = await sdk.fineTuning.jobs.checkpoints.list(job.id);
  expect(checkpoints.data[0]).toMatchObject({ object: 'fine_tuning.job.checkpoint', fine_tuning_job_id: job.id, metrics: expect.any(Object) });

  const other = await sdk.fineTuning.jobs.create({ model: 'gpt-4o-mini-2024-07-18', training_file: uploaded.id });
  const cancelled = await sdk.fineTuning.jobs.cancel(other.id);
  expect(cancelled).toMatchObject({ id: other.id, status: 'cancelled' });

  const deleted = await sdk.files.delete(uploaded.id);
  expect(deleted).toMatchObject({ id: uploaded.id, deleted: true });
  return { uploaded, content, job };
}

describe('client mode with OpenAI', () => {
  it('forwards every files and fine-tuning call with the key from Authorization, storing nothing', async () => {
    const before = await fileCount();
    const { uploaded, content, job } = await exerciseEverything(client({ 'x-gateway-provider': 'openai' }, OPENAI_KEY), {
      fileStatus: 'processed',
      organization: /^org-/,
    });
    // The provider received the exact bytes and fields.
    expect(openaiFake.state.files.get(uploaded.id)).toBeUndefined(); // deleted at the end
    const sent = openaiFake.state.jobs.get(job.id);
    expect(sent).toMatchObject({ suffix: 'cm', method: { type: 'supervised', supervised: { hyperparameters: { n_epochs: 2 } } } });
    expect(openaiFake.state.requests.some((r) => r.path === '/v1/files' && r.method === 'POST')).toBe(true);
    expect(content.length).toBeGreaterThan(0);
    expect(await fileCount()).toBe(before);
    expect((await api(gw, 'GET', '/v1/fine_tuning/jobs')).body.data).toEqual([]);
  });

  it('streams the exact bytes of an upload whose purpose comes after the file', async () => {
    const sdk = client({ 'x-gateway-provider': 'openai' }, OPENAI_KEY);
    const content = dataset(30);
    const file = await sdk.files.create({ file: await toFile(Buffer.from(content), 'late-purpose.jsonl'), purpose: 'fine-tune' });
    expect(openaiFake.state.files.get(file.id)?.content.toString()).toBe(content);
  });

  it('works with a stored integration (@slug), ignoring the Authorization header the SDK always sends', async () => {
    const created = await api(gw, 'POST', '/v1/integrations', { body: { slug: 'cm-openai', provider: 'openai', credentials: { api_key: OPENAI_KEY } } });
    expect(created.status).toBe(200);
    const sdk = client({ 'x-gateway-provider': '@cm-openai' }, 'sk-not-the-real-one');
    const jobs = await sdk.fineTuning.jobs.list();
    expect(jobs.data.length).toBeGreaterThan(0);
    const last = openaiFake.state.requests.at(-1);
    expect(last?.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);
  });

  it("answers another workspace's integration like an unknown one (404)", async () => {
    await api(gw, 'POST', '/v1/admin/workspaces', { body: { name: 'Other', slug: 'cm-other' } });
    await api(gw, 'POST', '/v1/integrations', {
      body: { slug: 'elsewhere', provider: 'openai', credentials: { api_key: OPENAI_KEY }, workspace_id: 'cm-other' },
    });
    const res = await api(gw, 'GET', '/v1/fine_tuning/jobs', { headers: { 'x-gateway-provider': '@elsewhere' } });
    expect(res.status).toBe(404);
    expect(res.body.error).toMatchObject({ type: 'not_found_error', param: 'x-gateway-provider' });
    const unknown = await api(gw, 'GET', '/v1/fine_tuning/jobs', { headers: { 'x-gateway-provider': '@nope' } });
    expect({ status: unknown.status, body: { ...unknown.body, error: { ...unknown.body.error, message: '' } } }).toEqual({
      status: 404,
      body: { error: { ...res.body.error, message: '' } },
    });
  });

  it('checks a named workspace even when header credentials need none, and finds integrations in it', async () => {
    const headers = { 'x-gateway-provider': 'openai', authorization: `Bearer ${OPENAI_KEY}` };
    const unknown = await api(gw, 'GET', '/v1/fine_tuning/jobs?workspace_id=cm-nowhere', { headers });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.message).toMatch(/Workspace/);
    const seen = openaiFake.state.requests.length;
    const named = await api(gw, 'GET', '/v1/fine_tuning/jobs?workspace_id=cm-other', { headers: { 'x-gateway-provider': '@elsewhere' } });
    expect(named.status).toBe(200);
    expect(openaiFake.state.requests.length).toBe(seen + 1);
  });

  it('maps provider errors: 401, 404, 429, 500 → 502, time-out → 504, never echoing the key', async () => {
    const headers = { 'x-gateway-provider': 'openai', authorization: `Bearer ${OPENAI_KEY}` };
    const wrongKey = await api(gw, 'GET', '/v1/fine_tuning/jobs', { headers: { ...headers, authorization: 'Bearer sk-wrong-9876543210' } });
    expect(wrongKey.status).toBe(401);
    // The message names the provider and carries its own words; its code stays.
    expect(wrongKey.body.error).toMatchObject({
      type: 'provider_error',
      code: 'invalid_api_key',
      message: expect.stringMatching(/^OpenAI: Incorrect API key provided/),
    });
    expect(JSON.stringify(wrongKey.body)).not.toContain('sk-wrong-9876543210');

    const missing = await api(gw, 'GET', '/v1/fine_tuning/jobs/ftjob-missing', { headers });
    expect(missing.status).toBe(404);
    expect(missing.body.error.type).toBe('provider_error');

    openaiFake.failNext('GET', '/v1/fine_tuning/jobs', 429, { times: 3, retryAfter: '0' });
    const limited = await api(gw, 'GET', '/v1/fine_tuning/jobs', { headers });
    expect(limited.status).toBe(429);
    expect(limited.body.error.type).toBe('provider_error');

    openaiFake.failNext('GET', '/v1/fine_tuning/jobs', 500, { times: 3, message: `boom ${OPENAI_KEY}` });
    const broken = await api(gw, 'GET', '/v1/fine_tuning/jobs', { headers });
    expect(broken.status).toBe(502);
    expect(JSON.stringify(broken.body)).not.toContain(OPENAI_KEY);

    openaiFake.delayNext('GET', '/v1/fine_tuning/jobs', 3_000, 3);
    const slow = await api(gw, 'GET', '/v1/fine_tuning/jobs', { headers });
    expect(slow.status).toBe(504);
  });

  it('refuses a missing key with 400 naming the header, before any request', async () => {
    const before = openaiFake.state.requests.length;
    const res = await api(gw, 'GET', '/v1/fine_tuning/jobs', { headers: { 'x-gateway-provider': 'openai' } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ param: 'authorization', code: 'missing_setting' });
    expect(openaiFake.state.requests.length).toBe(before);
  });
});

describe('client mode with Azure OpenAI', () => {
  it('forwards every call to the resource, api-version and api-key handled inside (Azure 201s, pending files)', async () => {
    const { job } = await exerciseEverything(client(AZURE_HEADERS, AZURE_TEST_API_KEY), { fileStatus: 'uploaded', organization: /^fake-aoai$/ });
    const request = azureFake.state.jobRequests.find((r) => r.body.suffix === 'cm');
    expect(request?.apiVersion).toBe('2024-10-21');
    // The 2024-10-21 API has no method: the hyperparameters went top-level.
    expect(request?.body).toMatchObject({ hyperparameters: { n_epochs: 2 } });
    expect(request?.body).not.toHaveProperty('method');
    expect(job.id).toMatch(/^ftjob-/);
    const azureRequests = azureFake.state.requests.filter((r) => r.path.startsWith('/fake-aoai/openai/'));
    expect(azureRequests.length).toBeGreaterThan(5);
    expect(azureRequests.every((r) => r.headers['api-key'] === AZURE_TEST_API_KEY && r.query.get('api-version') === '2024-10-21')).toBe(true);
  });

  it('with a stored integration (@slug) and its options', async () => {
    await createAzureIntegration(gw, 'cm-azure');
    await exerciseEverything(client({ 'x-gateway-provider': '@cm-azure' }), { fileStatus: 'uploaded', organization: /^fake-aoai$/ });
  });

  it.each(['evil.com/x', 'a@b', 'a:1', 'a.b', 'a%2fb', 'x'.repeat(300)])('refuses the resource name %j before any connection', async (hostile) => {
    const before = azureFake.state.requests.length;
    const res = await api(gw, 'GET', '/v1/fine_tuning/jobs', {
      headers: { 'x-gateway-provider': 'azure-openai', authorization: `Bearer ${AZURE_TEST_API_KEY}`, 'x-gateway-azure-resource-name': hostile },
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', param: 'x-gateway-azure-resource-name' });
    expect(azureFake.state.requests.length).toBe(before);
  });

  it('refuses a missing resource name or key with 400 naming the header', async () => {
    const noResource = await api(gw, 'GET', '/v1/files', { headers: { 'x-gateway-provider': 'azure-openai', authorization: `Bearer ${AZURE_TEST_API_KEY}` } });
    expect(noResource.status).toBe(400);
    expect(noResource.body.error.param).toBe('x-gateway-azure-resource-name');
    const noKey = await api(gw, 'GET', '/v1/files', { headers: AZURE_HEADERS });
    expect(noKey.status).toBe(400);
    expect(noKey.body.error.param).toBe('authorization');
  });
});
