/**
 * Client-mode batches with OpenAI and Azure OpenAI on the client-mode batch contract
 * (test/support/client-batch-kit.ts), against their fakes. Both take the caller's file as it is
 * (it is already their input); here what is theirs: the fields OpenAI received, Azure's deployment,
 * api-version and empty error file.
 */
import { AZURE_TEST_API_KEY, startFakeAzureOpenAI, type FakeAzureOpenAI } from '../fakes/azure-openai-server';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { toFile } from 'openai';
import { batchFile, clientBatchContract } from '../support/client-batch-kit';
import { clientSdk } from '../support/client-mode-kit';
import { startTestGateway, type TestGateway } from '../support/gateway';

const OPENAI_KEY = 'sk-client-batches-0123456789abcdef';
const MODEL = 'gpt-4o-mini-2024-07-18';
const DEPLOYMENT = 'gpt-4o-mini-batch';

let openaiFake: FakeOpenAI;
let azureFake: FakeAzureOpenAI;
let gw: TestGateway;
const logs: string[] = [];

beforeAll(async () => {
  openaiFake = await startFakeOpenAI({ apiKey: OPENAI_KEY });
  azureFake = await startFakeAzureOpenAI({ stepsPerPoll: 1 });
  azureFake.registerBatchDeployment(DEPLOYMENT, MODEL);
  gw = await startTestGateway({ GATEWAY_OPENAI_BASE_URL: openaiFake.url, GATEWAY_AZURE_OPENAI_BASE_URL: azureFake.baseUrlTemplate }, { logs });
});

afterAll(async () => {
  await gw.stop();
  await openaiFake.close();
  await azureFake.close();
});

describe('client-mode batches with OpenAI', () => {
  clientBatchContract({
    gw: () => gw,
    provider: 'openai',
    headers: () => ({ 'x-gateway-provider': 'openai', authorization: `Bearer ${OPENAI_KEY}` }),
    seen: () => openaiFake.state.requests.length,
    model: MODEL,
    failRequests: (ids) => openaiFake.batches.failRequests(ids),
    secrets: () => [OPENAI_KEY],
    logs: () => logs,
    hostile: [['x-gateway-openai-project', 'proj/../../x']],
    cancelled: ['cancelling'],
    expire: (handle) => openaiFake.batches.expire(handle),
    fail: (handle) => openaiFake.batches.fail(handle),
    // The caller's file went as it is, the metadata as the caller gave it.
    after: ({ batch }) => {
      const created = [...openaiFake.batches.batches.values()].find((b) => b.metadata?.team === 'client-mode');
      expect(created).toMatchObject({ input_file_id: batch.input_file_id, endpoint: '/v1/chat/completions', metadata: { team: 'client-mode' } });
      expect(batch.metadata).toEqual({ team: 'client-mode' });
    },
  });
});

it('passes a fine-tuned model through to OpenAI (client mode excludes no model: the provider judges it)', async () => {
  const tuned = 'ft:gpt-4o-mini-2024-07-18:acme::cb1';
  const sdk = clientSdk(gw, { 'x-gateway-provider': 'openai', authorization: `Bearer ${OPENAI_KEY}` });
  const uploaded = await sdk.files.create({ file: await toFile(Buffer.from(batchFile(tuned)), 'tuned.jsonl'), purpose: 'batch' });
  const batch = await sdk.batches.create({ input_file_id: uploaded.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
  expect(batch.status).toBe('validating');
  expect(openaiFake.state.files.get(uploaded.id)?.content.toString()).toContain(tuned);
});

describe('client-mode batches with Azure OpenAI', () => {
  const headers = { 'x-gateway-provider': 'azure-openai', 'x-gateway-azure-resource-name': 'fake-aoai', authorization: `Bearer ${AZURE_TEST_API_KEY}` };
  clientBatchContract({
    gw: () => gw,
    provider: 'azure-openai',
    headers: () => headers,
    seen: () => azureFake.state.requests.length,
    model: DEPLOYMENT,
    failRequests: (ids) => azureFake.batches().failRequests(ids),
    secrets: () => [AZURE_TEST_API_KEY],
    logs: () => logs,
    hostile: ['evil.com/x', 'a.b', 'a%2fb'].map((name): [string, string] => ['x-gateway-azure-resource-name', name]),
    cancelled: ['cancelling'],
    expire: (handle) => azureFake.batches().expire(handle),
    fail: (handle) => azureFake.batches().fail(handle),
    after: () => {
      const calls = azureFake.state.requests.filter((r) => r.path.startsWith('/fake-aoai/openai/batches'));
      expect(calls.length).toBeGreaterThan(2);
      expect(calls.every((r) => r.headers['api-key'] === AZURE_TEST_API_KEY && r.query.get('api-version') === '2024-10-21')).toBe(true);
    },
  });
});
