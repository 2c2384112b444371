/**
 * The gateway batch runner on a fine-tuned model of each of the six providers, one row per provider
 * (the test itself is gatewayRunsTunedModel in ./harness.ts): a hosted job tunes the model on the
 * provider's fake, a batch of its lines runs through the gateway's chat path with what serving the
 * model takes there (Azure, Bedrock and Fireworks serve a tuned model on a deployment), and the row
 * says how its fake is read back to the tuned model each call was for.
 */
import { AZURE_TEST_API_KEY, startFakeAzureOpenAI } from '../fakes/azure-openai-server';
import { startFakeBedrock } from '../fakes/bedrock-server';
import { startFakeFireworks } from '../fakes/fireworks-server';
import { startFakeOpenAI } from '../fakes/openai-server';
import { startFakeTogether } from '../fakes/together-server';
import { startFakeVertex } from '../fakes/vertex-server';
import { dataset } from '../fine-tuning/harness';
import { awsHeaders, chatDataset, DEFAULT_BUCKET, fakeEndpoints as bedrockEndpoints, NOVA, ROLE_ARN } from '../providers/bedrock-harness';
import { BUCKET, fakeEndpoints as vertexEndpoints } from '../providers/vertex-ai.support';
import { gatewayRunsTunedModel } from './harness';

const CHAT_PATH = '/v1/chat/completions';
const OPENAI_BASE = 'gpt-4o-mini-2024-07-18';
const OPENAI_KEY = 'sk-fake-tuned-batches-0123456789';
const TOGETHER_KEY = 'tg-tuned-batches-0123456789abcdef';
const FIREWORKS_KEY = 'fw-tuned-batches-0123456789abcdef';
const FIREWORKS_ACCOUNT = 'acme-labs';

/** Whether a recorded request body is one of the batch's (its questions carry the tag). */
const carries = (body: unknown, tag: string) => JSON.stringify(body).includes(tag);

gatewayRunsTunedModel({
  provider: 'openai',
  setup: {
    start: () => startFakeOpenAI({ apiKey: OPENAI_KEY }),
    env: (fake) => ({ GATEWAY_OPENAI_BASE_URL: fake.url }),
    integrations: () => [{ slug: 'my-openai', provider: 'openai', credentials: { api_key: OPENAI_KEY }, options: {} }],
    model: OPENAI_BASE,
    dataset: dataset(),
  },
  reached: (fake, tag) => fake.state.chatRequests.filter((r) => carries(r.body, tag)).map((r) => r.model),
  failNextChat: (fake, status) => fake.failNext('POST', CHAT_PATH, status),
});

gatewayRunsTunedModel({
  provider: 'azure-openai',
  setup: {
    start: () => startFakeAzureOpenAI(),
    env: (fake) => ({ GATEWAY_AZURE_OPENAI_BASE_URL: fake.baseUrlTemplate }),
    integrations: () => [
      { slug: 'my-azure', provider: 'azure-openai', credentials: { api_key: AZURE_TEST_API_KEY }, options: { 'x-gateway-azure-resource-name': 'fake-aoai' } },
    ],
    model: OPENAI_BASE,
    dataset: dataset(),
  },
  // Azure's Global Batch runs base models only.
  gatewayByDefault: true,
  serve: (fake, tuned) => {
    fake.registerDeployment('ft-batch', tuned);
    return { 'x-gateway-azure-deployment-id': 'ft-batch' };
  },
  reached: (fake, tag) => fake.state.chatRequests.filter((r) => carries(r.body, tag)).map((r) => fake.state.deployments.get(`${r.resource}/${r.deployment}`)!),
  failNextChat: (fake, status) => fake.failNext('POST', '/fake-aoai/openai/deployments/', status),
});

gatewayRunsTunedModel({
  provider: 'bedrock',
  setup: {
    start: () => startFakeBedrock(),
    env: bedrockEndpoints,
    integrations: (fake) => {
      const headers = awsHeaders(fake);
      const credentials = { aws_access_key_id: headers['x-gateway-aws-access-key-id'], aws_secret_access_key: headers['x-gateway-aws-secret-access-key'] };
      const options = { 'x-gateway-aws-region': fake.region, 'x-gateway-aws-s3-bucket': DEFAULT_BUCKET, 'x-gateway-aws-role-arn': ROLE_ARN };
      return [{ slug: 'my-bedrock', provider: 'bedrock', credentials, options }];
    },
    model: 'my-nova',
    job: { provider_options: { model: NOVA } },
    dataset: chatDataset(12),
  },
  // Bedrock's batch inference runs base models only.
  gatewayByDefault: true,
  serve: (fake, tuned) => ({ 'x-gateway-aws-bedrock-model': fake.registerDeployment(tuned) }),
  reached: (fake, tag) => fake.state.converseCalls.filter((c) => carries(c.body, tag)).map((c) => fake.state.deployments.get(c.modelId)?.modelArn ?? c.modelId),
  failNextChat: (fake, status) => fake.runtime.failNext('POST', '/model/', status),
});

gatewayRunsTunedModel({
  provider: 'vertex-ai',
  setup: {
    start: () => startFakeVertex(),
    env: vertexEndpoints,
    integrations: (fake) => [
      {
        slug: 'my-vertex',
        provider: 'vertex-ai',
        credentials: { service_account_json: JSON.stringify(fake.serviceAccount) },
        options: { 'x-gateway-vertex-project-id': fake.projectId, 'x-gateway-vertex-region': fake.location, 'x-gateway-vertex-storage-bucket-name': BUCKET },
      },
    ],
    model: 'gemini-2.0-flash-001',
    dataset: dataset(12),
  },
  // A tuned Gemini answers on its endpoint: each call is read back to the tuned model that endpoint serves.
  reached: (fake, tag) =>
    fake.state.generateRequests
      .filter((r) => carries(r.body, tag))
      .map((r) => [...fake.state.tuningJobs.values()].find((job) => job.tunedModel?.endpoint.endsWith(r.target))?.tunedModel?.model ?? r.target),
  failNextChat: (fake, status) => fake.failNext('POST', '/v1', status),
});

gatewayRunsTunedModel({
  provider: 'fireworks-ai',
  setup: {
    start: () => startFakeFireworks({ apiKey: FIREWORKS_KEY, accountId: FIREWORKS_ACCOUNT }),
    env: (fake) => ({ GATEWAY_FIREWORKS_BASE_URL: fake.origin }),
    integrations: () => [
      {
        slug: 'my-fireworks',
        provider: 'fireworks-ai',
        credentials: { api_key: FIREWORKS_KEY },
        options: { 'x-gateway-fireworks-account-id': FIREWORKS_ACCOUNT },
      },
    ],
    model: 'llama-v3p1-8b-instruct',
    dataset: dataset(),
  },
  serve: (fake, tuned) => {
    fake.deploy(tuned, `accounts/${FIREWORKS_ACCOUNT}/deployments/batch-serving`);
    return { 'x-gateway-fireworks-deployment': 'batch-serving' };
  },
  // Fireworks names a model on a deployment `<model>#<deployment>`.
  reached: (fake, tag) => fake.state.chatRequests.filter((r) => carries(r, tag)).map((r) => String(r.model).split('#')[0]),
  failNextChat: (fake, status) => fake.failNext('POST', `/inference${CHAT_PATH}`, status),
});

gatewayRunsTunedModel({
  provider: 'together-ai',
  setup: {
    start: () => startFakeTogether({ apiKey: TOGETHER_KEY }),
    env: (fake) => ({ GATEWAY_TOGETHER_BASE_URL: fake.url }),
    integrations: () => [{ slug: 'my-together', provider: 'together-ai', credentials: { api_key: TOGETHER_KEY } }],
    model: 'meta-llama/Meta-Llama-3.1-8B-Instruct-Reference',
    dataset: dataset(),
  },
  reached: (fake, tag) => fake.state.chatRequests.filter((r) => carries(r, tag)).map((r) => String(r.model)),
  failNextChat: (fake, status) => fake.failNext('POST', CHAT_PATH, status),
});
