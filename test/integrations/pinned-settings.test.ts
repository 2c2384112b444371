/**
 * Settings that choose where credentials are used (a host, an account, a bucket, a project, a region)
 * come from a stored integration only: with `@slug`, a header, a hosted job's `gateway_options` or a
 * hosted chat request that would change one is refused with 400 naming it, and the target it names
 * receives nothing, so a workspace key cannot send the integration's stored key elsewhere. Settings
 * that choose nothing of the kind (a deployment, an API version) may still be given per request.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type OpenAI from 'openai';
import { AZURE_TEST_API_KEY, startFakeAzureOpenAI, type FakeAzureOpenAI } from '../fakes/azure-openai-server';
import { createServiceAccount } from '../fakes/google-auth';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { succeededJob } from '../chat/harness';
import { createTestDatabase, sdk, startHostedGateway, tempDir, newKey, type HostedGateway } from '../fine-tuning/harness';
import { api, gql } from '../support/gateway';

let openai: FakeOpenAI;
let azure: FakeAzureOpenAI;
/** Stands in for every other provider's endpoints: it counts what reaches it, and must see nothing. */
let elsewhere: http.Server;
let elsewhereHits = 0;
let gw: HostedGateway;
let dir: { dir: string; remove(): Promise<void> };
let client: OpenAI;
let azureJob: { id: string; model: string };

const attackerRequests = () => azure.state.requests.filter((r) => r.path.startsWith('/attackerres/')).length;

beforeAll(async () => {
  openai = await startFakeOpenAI();
  azure = await startFakeAzureOpenAI({ resources: ['victimres', 'attackerres'], pollsToProcessFile: 0 });
  elsewhere = http.createServer((req, res) => {
    elsewhereHits++;
    res.writeHead(500).end();
  });
  await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve));
  const other = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}`;
  dir = await tempDir('gw-pinned-');
  gw = await startHostedGateway({
    fake: openai,
    database: await createTestDatabase(),
    dataDir: dir.dir,
    key: newKey(),
    env: {
      GATEWAY_AZURE_OPENAI_BASE_URL: azure.baseUrlTemplate,
      GATEWAY_BEDROCK_BASE_URL: other,
      GATEWAY_BEDROCK_RUNTIME_BASE_URL: other,
      GATEWAY_S3_BASE_URL: other,
      GATEWAY_VERTEX_BASE_URL: other,
      GATEWAY_GCS_BASE_URL: other,
      GATEWAY_GOOGLE_TOKEN_URL: `${other}/token`,
      GATEWAY_FIREWORKS_BASE_URL: other,
    },
  });
  client = sdk(gw);
  const serviceAccount = createServiceAccount('victim-project', `${other}/token`);
  const integrations = [
    { slug: 'az', provider: 'azure-openai', credentials: { api_key: AZURE_TEST_API_KEY }, options: { 'x-gateway-azure-resource-name': 'victimres' } },
    { slug: 'oai', provider: 'openai', credentials: { api_key: 'sk-test-fake' }, options: { 'x-gateway-openai-project': 'proj_victim' } },
    {
      slug: 'aws',
      provider: 'bedrock',
      credentials: { aws_access_key_id: 'AKIAVICTIM0123456789', aws_secret_access_key: 'victim-secret' },
      options: { 'x-gateway-aws-region': 'us-east-1', 'x-gateway-aws-s3-bucket': 'victim-bucket' },
    },
    {
      slug: 'gcp',
      provider: 'vertex-ai',
      credentials: { service_account_json: JSON.stringify(serviceAccount) },
      options: {
        'x-gateway-vertex-project-id': 'victim-project',
        'x-gateway-vertex-region': 'us-central1',
        'x-gateway-vertex-storage-bucket-name': 'victim-data',
      },
    },
    { slug: 'fw', provider: 'fireworks-ai', credentials: { api_key: 'fw-victim' }, options: { 'x-gateway-fireworks-account-id': 'victim' } },
  ];
  for (const body of integrations) expect((await api(gw, 'POST', '/v1/integrations', { body })).status).toBe(200);
  azureJob = await succeededJob(client, '@az');
  azure.registerDeployment('ft-deployment', azureJob.model, 'victimres');
});

afterAll(async () => {
  await gw.stop();
  await gw.database.drop();
  await Promise.all([openai.close(), azure.close(), new Promise((resolve) => elsewhere.close(resolve))]);
  await dir.remove();
});

function expectRefused(res: { status: number; body: any }, param: string) {
  expect(res.status).toBe(400);
  expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'setting_not_overridable', param });
}

describe('@slug with a header override', () => {
  it('refuses another Azure resource for @az (stored: victimres), and attackerres receives nothing', async () => {
    const headers = { 'x-gateway-provider': '@az', 'x-gateway-azure-resource-name': 'attackerres' };
    expectRefused(await api(gw, 'GET', '/v1/files', { headers }), 'x-gateway-azure-resource-name');
    expectRefused(await api(gw, 'GET', '/v1/fine_tuning/jobs', { headers }), 'x-gateway-azure-resource-name');
    expect(attackerRequests()).toBe(0);
  });

  it('accepts the stored value itself, and settings that choose no target (the API version)', async () => {
    const before = azure.state.requests.length;
    const same = await api(gw, 'GET', '/v1/files', { headers: { 'x-gateway-provider': '@az', 'x-gateway-azure-resource-name': 'victimres' } });
    expect(same.status).toBe(200);
    const version = await api(gw, 'GET', '/v1/files', { headers: { 'x-gateway-provider': '@az', 'x-gateway-azure-api-version': '2025-04-01-preview' } });
    expect(version.status).toBe(200);
    expect(azure.state.requests.slice(before).map((r) => [r.path, r.query.get('api-version')])).toEqual([
      ['/victimres/openai/files', '2024-10-21'],
      ['/victimres/openai/files', '2025-04-01-preview'],
    ]);
  });

  it.each([
    ['@oai', 'x-gateway-openai-project', 'proj_attacker'],
    ['@oai', 'x-gateway-openai-organization', 'org-attacker'],
    ['@aws', 'x-gateway-aws-region', 'us-west-2'],
    ['@aws', 'x-gateway-aws-s3-bucket', 'attacker-bucket'],
    ['@gcp', 'x-gateway-vertex-project-id', 'attacker-project'],
    ['@gcp', 'x-gateway-vertex-region', 'europe-west4'],
    ['@gcp', 'x-gateway-vertex-storage-bucket-name', 'attacker-data'],
    ['@fw', 'x-gateway-fireworks-account-id', 'attacker'],
  ])('%s: refuses %s (stored or not), before any connection', async (slug, header, value) => {
    const before = openai.state.requests.length;
    expectRefused(await api(gw, 'GET', '/v1/files', { headers: { 'x-gateway-provider': slug, [header]: value } }), header);
    expect(openai.state.requests.length).toBe(before);
    expect(elsewhereHits).toBe(0);
  });
});

describe('hosted jobs and hosted chat', () => {
  it("refuses a job whose gateway_options would move the integration's resource", async () => {
    const file = (await client.files.list()).data[0];
    const res = await api(gw, 'POST', '/v1/fine_tuning/jobs', {
      body: { model: 'gpt-4o-mini', training_file: file.id, gateway_options: { 'x-gateway-provider': '@az', 'x-gateway-azure-resource-name': 'attackerres' } },
    });
    expectRefused(res, 'gateway_options.x-gateway-azure-resource-name');
    expect(attackerRequests()).toBe(0);
  });

  it('refuses a chat with a hosted model whose headers name another resource; a deployment header still works', async () => {
    const messages = [{ role: 'user', content: 'Hello' }];
    const hostile = await api(gw, 'POST', '/v1/chat/completions', {
      body: { model: azureJob.model, messages },
      headers: { 'x-gateway-azure-resource-name': 'attackerres', 'x-gateway-azure-deployment-id': 'ft-deployment' },
    });
    expectRefused(hostile, 'x-gateway-azure-resource-name');
    const served = await api(gw, 'POST', '/v1/chat/completions', {
      body: { model: azureJob.model, messages },
      headers: { 'x-gateway-azure-deployment-id': 'ft-deployment' },
    });
    expect(served.status).toBe(200);
    expect(azure.state.requests.at(-1)).toMatchObject({ method: 'POST', path: '/victimres/openai/deployments/ft-deployment/chat/completions' });
    expect(attackerRequests()).toBe(0);
  });

  it('refuses the same through GraphQL (gatewayOptions of chatCompletion)', async () => {
    const res = await gql(gw, 'mutation($input: ChatCompletionInput!) { chatCompletion(input: $input) { id } }', {
      input: {
        model: azureJob.model,
        messages: [{ role: 'USER', content: 'Hello' }],
        gatewayOptions: { 'x-gateway-azure-resource-name': 'attackerres', 'x-gateway-azure-deployment-id': 'ft-deployment' },
      },
    });
    expect(res.body.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', param: 'x-gateway-azure-resource-name' });
    expect(attackerRequests()).toBe(0);
  });
});
