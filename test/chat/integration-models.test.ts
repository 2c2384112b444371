/**
 * `GET /v1/models` and GraphQL `models` list, after the workspace's fine-tuned models, the models each
 * integration's provider lists, as `@slug/<provider model id>` (issue 22 §4): from OpenAI's, Azure's and
 * Together's `/models`, Fireworks' account models and Bedrock's ListFoundationModels (fakes speaking each
 * wire format), with the official openai SDK (gatewaySdk checks every answer against OpenAI's schema).
 * One that fails, or is slower than the wait, is left out, the rest answered; a list is reused until
 * it expires or the integration changes; another workspace sees none of it.
 */
import { startFakeAzureOpenAI, AZURE_FINE_TUNABLE_MODELS, AZURE_TEST_API_KEY, AZURE_TEST_RESOURCE, type FakeAzureOpenAI } from '../fakes/azure-openai-server';
import { startFakeBedrock, FOUNDATION_MODELS, type FakeBedrock } from '../fakes/bedrock-server';
import { startFakeFireworks, type FakeFireworks } from '../fakes/fireworks-server';
import { startFakeOpenAI, OPENAI_CHAT_MODELS, type FakeOpenAI } from '../fakes/openai-server';
import { startFakeTogether, type FakeTogether } from '../fakes/together-server';
import { ModelsDocument } from '../graphql/generated/operations';
import { awsHeaders, fakeEndpoints } from '../providers/bedrock-harness';
import { gatewaySdk } from '../support/answers';
import { api, startTestGateway, type TestGateway } from '../support/gateway';
import { data } from '../support/graphql';
import { eventually } from '../fine-tuning/harness';
import { workspaceWithKey } from '../usage/harness';

let openai: FakeOpenAI;
let azure: FakeAzureOpenAI;
let bedrock: FakeBedrock;
let fireworks: FakeFireworks;
let together: FakeTogether;
let gw: TestGateway;
let other: { key: string };

const TUNED_FIREWORKS = 'accounts/fake-account/models/my-tuned';

const integration = (slug: string, provider: string, credentials: Record<string, string>, options: Record<string, string> = {}) =>
  api(gw, 'POST', '/v1/integrations', { body: { slug, provider, credentials, options } });

beforeAll(async () => {
  [openai, azure, bedrock, fireworks, together] = await Promise.all([
    startFakeOpenAI(),
    startFakeAzureOpenAI(),
    startFakeBedrock(),
    startFakeFireworks({ accountId: 'fake-account' }),
    startFakeTogether(),
  ]);
  gw = await startTestGateway({
    ...fakeEndpoints(bedrock),
    GATEWAY_OPENAI_BASE_URL: openai.url,
    GATEWAY_AZURE_OPENAI_BASE_URL: azure.baseUrlTemplate,
    GATEWAY_FIREWORKS_BASE_URL: fireworks.origin,
    GATEWAY_TOGETHER_BASE_URL: together.url,
    GATEWAY_PROVIDER_TIMEOUT_MS: '10000',
  });
  const now = new Date().toISOString();
  fireworks.state.models.set(TUNED_FIREWORKS, {
    name: TUNED_FIREWORKS,
    displayName: 'my-tuned',
    kind: 'HF_PEFT_ADDON',
    state: 'READY',
    status: { code: 'OK', message: '' },
    createTime: '2026-01-02T03:04:05Z',
    updateTime: now,
    fineTuningJob: 'accounts/fake-account/supervisedFineTuningJobs/j1',
    peftDetails: { baseModel: 'accounts/fireworks/models/llama-v3p1-8b-instruct', r: 8, targetModules: [] },
  });
  const aws = awsHeaders(bedrock);
  const created = await Promise.all([
    integration('my-openai', 'openai', { api_key: 'sk-test-fake' }),
    integration('my-azure', 'azure-openai', { api_key: AZURE_TEST_API_KEY }, { 'x-gateway-azure-resource-name': AZURE_TEST_RESOURCE }),
    integration(
      'my-bedrock',
      'bedrock',
      { aws_access_key_id: aws['x-gateway-aws-access-key-id'], aws_secret_access_key: aws['x-gateway-aws-secret-access-key'] },
      { 'x-gateway-aws-region': aws['x-gateway-aws-region'] },
    ),
    integration('my-fireworks', 'fireworks-ai', { api_key: fireworks.apiKey }, { 'x-gateway-fireworks-account-id': 'fake-account' }),
    integration('my-together', 'together-ai', { api_key: 'tg-test-fake-key' }),
    integration('bad-key', 'openai', { api_key: 'sk-not-the-key' }),
  ]);
  expect(created.map((r) => r.status)).toEqual(created.map(() => 200));
  other = await workspaceWithKey(gw, 'models-other');
});

afterAll(async () => {
  await gw.stop();
  await Promise.all([openai.close(), azure.close(), bedrock.close(), fireworks.close(), together.close()]);
});

const listed = async (key = gw.key) => (await gatewaySdk({ url: gw.url, key }).models.list()).data;
const modelListCalls = () => openai.state.requests.filter((r) => r.method === 'GET' && r.path === '/v1/models').length;

it("lists each integration's provider models as @slug/<id>, in OpenAI's model objects", async () => {
  // A provider slower than the wait (3 s; a loaded machine loading the AWS SDK) is in a later answer.
  const slugs = ['my-openai', 'my-azure', 'my-bedrock', 'my-fireworks', 'my-together'];
  const complete = (list: Awaited<ReturnType<typeof listed>>) => slugs.every((slug) => list.some((m) => m.id.startsWith(`@${slug}/`)));
  const models = await eventually(async () => {
    const list = await listed();
    return complete(list) ? list : undefined;
  }, 20_000);
  const ids = models.map((m) => m.id);
  expect(models.find((m) => m.id === '@my-openai/gpt-4o-mini')).toEqual({
    id: '@my-openai/gpt-4o-mini',
    object: 'model',
    created: 1_700_000_000,
    owned_by: 'system',
  });
  expect(ids.filter((id) => id.startsWith('@my-openai/'))).toEqual(OPENAI_CHAT_MODELS.map((id) => `@my-openai/${id}`));
  // Azure lists no owner (the resource owns them) and says created_at; its embeddings model has no chat.
  expect(models.filter((m) => m.id.startsWith('@my-azure/'))).toEqual(
    AZURE_FINE_TUNABLE_MODELS.map((id) => ({ id: `@my-azure/${id}`, object: 'model', created: 1_720_000_000, owned_by: AZURE_TEST_RESOURCE })),
  );
  // Bedrock gives no creation time: 0; the owner is the model's provider.
  expect(ids.filter((id) => id.startsWith('@my-bedrock/'))).toEqual(FOUNDATION_MODELS.map((id) => `@my-bedrock/${id}`));
  expect(models.find((m) => m.id === '@my-bedrock/anthropic.claude-3-haiku-20240307-v1:0')).toMatchObject({ created: 0, owned_by: 'Anthropic' });
  expect(models.filter((m) => m.id.startsWith('@my-fireworks/'))).toEqual([
    { id: `@my-fireworks/${TUNED_FIREWORKS}`, object: 'model', created: Date.parse('2026-01-02T03:04:05Z') / 1000, owned_by: 'fake-account' },
  ]);
  expect(ids).toContain('@my-together/Qwen/Qwen2.5-7B-Instruct');
  expect(ids.some((id) => id.includes('bge-large'))).toBe(false);
  // The integration the provider refuses is left out, logged, and the list still answers.
  expect(ids.some((id) => id.startsWith('@bad-key/'))).toBe(false);
});

it('reuses a list until the integration changes, and leaves out a provider that fails', async () => {
  await listed();
  const before = modelListCalls();
  await listed();
  expect(modelListCalls()).toBe(before);

  // New credentials are a new integration version: asked afresh, and this time the provider is down.
  openai.failNext('GET', '/v1/models', 503, { times: 10 });
  const rotated = await api(gw, 'PATCH', '/v1/integrations/my-openai', { body: { credentials: { api_key: 'sk-test-fake' } } });
  expect(rotated.status).toBe(200);
  const ids = (await listed()).map((m) => m.id);
  expect(modelListCalls()).toBeGreaterThan(before);
  expect(ids.some((id) => id.startsWith('@my-openai/'))).toBe(false);
  expect(ids).toContain('@my-together/Qwen/Qwen2.5-7B-Instruct');
});

it('answers without a provider slower than the wait, whose list then fills the cache', async () => {
  together.delayNext('GET', '/v1/models', 5_000);
  const rotated = await api(gw, 'PATCH', '/v1/integrations/my-together', { body: { credentials: { api_key: 'tg-test-fake-key' } } });
  expect(rotated.status).toBe(200);
  const started = Date.now();
  const ids = (await listed()).map((m) => m.id);
  expect(Date.now() - started).toBeLessThan(5_000);
  expect(ids.some((id) => id.startsWith('@my-together/'))).toBe(false);
  expect(ids).toContain('@my-bedrock/amazon.nova-micro-v1:0');
  const calls = together.state.requests.filter((r) => r.path === '/v1/models').length;
  await eventually(async () => ((await listed()).some((m) => m.id.startsWith('@my-together/')) ? true : undefined), 10_000, 200);
  // The slow call filled the cache: no second one was made.
  expect(together.state.requests.filter((r) => r.path === '/v1/models').length).toBe(calls);
});

it('retrieves one listed model by its @slug id; one not listed, or of another workspace, is 404', async () => {
  const sdk = gatewaySdk({ url: gw.url, key: gw.key });
  expect(await sdk.models.retrieve('@my-bedrock/amazon.nova-micro-v1:0')).toEqual({
    id: '@my-bedrock/amazon.nova-micro-v1:0',
    object: 'model',
    created: 0,
    owned_by: 'Amazon',
  });
  for (const [ref, key] of [
    ['@my-bedrock/no-such-model', gw.key],
    ['@nobody/amazon.nova-micro-v1:0', gw.key],
    ['@my-bedrock/amazon.nova-micro-v1:0', other.key],
  ]) {
    const res = await api({ url: gw.url, key }, 'GET', `/v1/models/${ref}`);
    expect(res.status).toBe(404);
    expect(res.body.error).toMatchObject({ code: 'model_not_found', param: 'model' });
  }
  expect(await listed(other.key)).toEqual([]);
});

it('lists the same models in GraphQL, with their integration and no job', async () => {
  const { models } = await data(gw, ModelsDocument, {});
  expect(models.find((m) => m.id === '@my-together/Qwen/Qwen2.5-7B-Instruct')).toEqual({
    id: '@my-together/Qwen/Qwen2.5-7B-Instruct',
    created: new Date(1_710_000_000 * 1000).toISOString(),
    ownedBy: 'Qwen',
    provider: 'together-ai',
    fineTuningJobId: null,
    integration: '@my-together',
  });
});
