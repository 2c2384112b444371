/**
 * Client mode with OpenAI and Azure OpenAI on the client-mode contract
 * (test/support/client-mode-kit.ts), against their fakes; here what is theirs: OpenAI's exact bytes
 * and fields, integrations of another workspace; Azure's api-version, api-key and
 * top-level hyperparameters.
 */
import { toFile } from 'openai';
import { AZURE_TEST_API_KEY, startFakeAzureOpenAI, type FakeAzureOpenAI } from '../fakes/azure-openai-server';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { dataset } from '../fine-tuning/harness';
import { clientModeContract, clientSdk } from '../support/client-mode-kit';
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

const OPENAI_HEADERS = { 'x-gateway-provider': 'openai', authorization: `Bearer ${OPENAI_KEY}` };
const AZURE_HEADERS = { 'x-gateway-provider': 'azure-openai', 'x-gateway-azure-resource-name': 'fake-aoai', authorization: `Bearer ${AZURE_TEST_API_KEY}` };
const MODEL = 'gpt-4o-mini-2024-07-18';

/** What both providers share: OpenAI's own files and jobs API; only the file status after an upload and the owner differ. */
const openaiShapes = (fileStatus: string, organization: RegExp) => ({
  dataset: () => dataset(12),
  model: MODEL,
  // The bytes the gateway streamed, also where the provider does not say yet (Azure).
  file: (content: string) => ({ id: expect.stringMatching(/^file-/), bytes: Buffer.byteLength(content), status: fileStatus }),
  job: () => ({
    model: MODEL,
    status: expect.stringMatching(/^(validating_files|queued)$/),
    organization_id: expect.stringMatching(organization),
    seed: expect.any(Number),
    // What nobody chose reads "auto" (Azure answers -1 there).
    hyperparameters: { n_epochs: 2, batch_size: 'auto', learning_rate_multiplier: 'auto' },
  }),
  checkpoints: (checkpoints: Array<{ metrics: unknown }>) => expect(checkpoints[0].metrics).toEqual(expect.any(Object)),
});

describe('client mode with OpenAI', () => {
  clientModeContract({
    gw: () => gw,
    headers: () => OPENAI_HEADERS,
    seen: () => openaiFake.state.requests.length,
    errors: { fake: () => openaiFake, listPath: '/v1/fine_tuning/jobs', unknownJob: 'ftjob-missing', secret: OPENAI_KEY },
    ...openaiShapes('processed', /^org-/),
    // The provider received the exact fields; the file is gone at the end.
    after: ({ uploaded, job }) => {
      expect(openaiFake.state.files.get(uploaded.id)).toBeUndefined();
      expect(openaiFake.state.jobs.get(job.id)).toMatchObject({
        suffix: 'cm',
        method: { type: 'supervised', supervised: { hyperparameters: { n_epochs: 2 } } },
      });
      expect(openaiFake.state.requests.some((r) => r.path === '/v1/files' && r.method === 'POST')).toBe(true);
    },
    integration: () => ({ credentials: { api_key: OPENAI_KEY } }),
    afterSlug: () => expect(openaiFake.state.requests.at(-1)?.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`),
    hostile: [],
    required: ['authorization'],
    // The message names the provider and carries its own words; its code stays.
    wrongKey: {
      header: 'authorization',
      value: 'Bearer sk-wrong-9876543210',
      status: 401,
      error: { code: 'invalid_api_key', message: expect.stringMatching(/^OpenAI: Incorrect API key provided/) },
    },
  });

  it('streams the exact bytes of an upload whose purpose comes after the file', async () => {
    const sdk = clientSdk(gw, OPENAI_HEADERS);
    const content = dataset(30);
    const file = await sdk.files.create({ file: await toFile(Buffer.from(content), 'late-purpose.jsonl'), purpose: 'fine-tune' });
    expect(openaiFake.state.files.get(file.id)?.content.toString()).toBe(content);
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
    const headers = OPENAI_HEADERS;
    const unknown = await api(gw, 'GET', '/v1/fine_tuning/jobs?workspace_id=cm-nowhere', { headers });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.message).toMatch(/Workspace/);
    const seen = openaiFake.state.requests.length;
    const named = await api(gw, 'GET', '/v1/fine_tuning/jobs?workspace_id=cm-other', { headers: { 'x-gateway-provider': '@elsewhere' } });
    expect(named.status).toBe(200);
    expect(openaiFake.state.requests.length).toBe(seen + 1);
  });
});

describe('client mode with Azure OpenAI', () => {
  clientModeContract({
    gw: () => gw,
    headers: () => AZURE_HEADERS,
    seen: () => azureFake.state.requests.length,
    errors: { fake: () => azureFake, listPath: '/fake-aoai/openai/fine_tuning/jobs', unknownJob: 'ftjob-missing', secret: AZURE_TEST_API_KEY },
    // Azure processes a file before a job may use it: it reads `uploaded`, and retrieving it moves the fake on.
    ...openaiShapes('uploaded', /^fake-aoai$/),
    // The resource, api-version and api-key are handled inside (Azure 201s, pending files).
    after: ({ job }) => {
      const request = azureFake.state.jobRequests.find((r) => r.body.suffix === 'cm');
      expect(request?.apiVersion).toBe('2024-10-21');
      // The 2024-10-21 API has no method: the hyperparameters went top-level.
      expect(request?.body).toMatchObject({ hyperparameters: { n_epochs: 2 } });
      expect(request?.body).not.toHaveProperty('method');
      expect(job.id).toMatch(/^ftjob-/);
      const azureRequests = azureFake.state.requests.filter((r) => r.path.startsWith('/fake-aoai/openai/'));
      expect(azureRequests.length).toBeGreaterThan(5);
      expect(azureRequests.every((r) => r.headers['api-key'] === AZURE_TEST_API_KEY && r.query.get('api-version') === '2024-10-21')).toBe(true);
    },
    integration: () => ({ credentials: { api_key: AZURE_TEST_API_KEY }, options: { 'x-gateway-azure-resource-name': 'fake-aoai' } }),
    hostile: ['evil.com/x', 'a@b', 'a:1', 'a.b', 'a%2fb', 'x'.repeat(300)].map((name): [string, string] => ['x-gateway-azure-resource-name', name]),
    required: ['x-gateway-azure-resource-name', 'authorization'],
  });
});
