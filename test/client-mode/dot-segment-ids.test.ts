/**
 * Provider ids that are dot segments (`.`, `..`, `%2E%2E`, mixed case) would leave their path segment
 * once a URL parser folds them (`DELETE /v1/files/..` becoming `DELETE {base}/`). On every provider, in
 * client mode and through a stored integration (`@slug`), every route that takes an id answers 400
 * `invalid_id` naming the parameter, and the fake provider receives no request at all.
 */
import http from 'node:http';
import { AZURE_TEST_API_KEY, AZURE_TEST_RESOURCE, startFakeAzureOpenAI, type FakeAzureOpenAI } from '../fakes/azure-openai-server';
import { startFakeBedrock, type FakeBedrock } from '../fakes/bedrock-server';
import { startFakeFireworks, type FakeFireworks } from '../fakes/fireworks-server';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { startFakeTogether, type FakeTogether } from '../fakes/together-server';
import { startFakeVertex, type FakeVertex } from '../fakes/vertex-server';
import { awsHeaders, bedrockIntegration, fakeEndpoints as bedrockEndpoints } from '../providers/bedrock-harness';
import { BUCKET, fakeEndpoints as vertexEndpoints, vertexHeaders } from '../providers/vertex-ai.support';
import { api, startTestGateway, type TestGateway } from '../support/gateway';
import { assertDocumentedAnswer } from '../support/openapi';

const OPENAI_KEY = 'sk-dot-ids-0123456789abcdef';
const FIREWORKS_KEY = 'fw-dot-ids-0123456789abcdef';
const TOGETHER_KEY = 'tg-dot-ids-0123456789abcdef';
const FIREWORKS_ACCOUNT = 'acme-labs';

let openai: FakeOpenAI;
let azure: FakeAzureOpenAI;
let bedrock: FakeBedrock;
let vertex: FakeVertex;
let fireworks: FakeFireworks;
let together: FakeTogether;
let gw: TestGateway;

interface Provider {
  name: string;
  /** Client-mode headers: credentials and settings. */
  headers: () => Record<string, string>;
  /** The same, stored as an integration. */
  integration: () => { credentials: Record<string, string>; options: Record<string, string> };
  /** Every request the provider's fake servers have received. */
  received: () => number;
}

const PROVIDERS: Provider[] = [
  {
    name: 'openai',
    headers: () => ({ authorization: `Bearer ${OPENAI_KEY}` }),
    integration: () => ({ credentials: { api_key: OPENAI_KEY }, options: {} }),
    received: () => openai.state.requests.length,
  },
  {
    name: 'azure-openai',
    headers: () => ({ authorization: `Bearer ${AZURE_TEST_API_KEY}`, 'x-gateway-azure-resource-name': AZURE_TEST_RESOURCE }),
    integration: () => ({ credentials: { api_key: AZURE_TEST_API_KEY }, options: { 'x-gateway-azure-resource-name': AZURE_TEST_RESOURCE } }),
    received: () => azure.state.requests.length,
  },
  {
    name: 'bedrock',
    headers: () => awsHeaders(bedrock),
    integration: () => bedrockIntegration(bedrock, { 'x-gateway-aws-s3-bucket': awsHeaders(bedrock)['x-gateway-aws-s3-bucket'] }),
    received: () => bedrock.control.requests.length + bedrock.runtime.requests.length + bedrock.s3.state.requests.length,
  },
  {
    name: 'vertex-ai',
    headers: () => vertexHeaders(vertex),
    integration: () => ({
      credentials: { service_account_json: JSON.stringify(vertex.serviceAccount) },
      options: {
        'x-gateway-vertex-project-id': vertex.projectId,
        'x-gateway-vertex-region': vertex.location,
        'x-gateway-vertex-storage-bucket-name': BUCKET,
      },
    }),
    received: () => vertex.state.requests.length + vertex.state.oauth.requests.length,
  },
  {
    name: 'fireworks-ai',
    headers: () => ({ authorization: `Bearer ${FIREWORKS_KEY}`, 'x-gateway-fireworks-account-id': FIREWORKS_ACCOUNT }),
    integration: () => ({ credentials: { api_key: FIREWORKS_KEY }, options: { 'x-gateway-fireworks-account-id': FIREWORKS_ACCOUNT } }),
    received: () => fireworks.state.requests.length,
  },
  {
    name: 'together-ai',
    headers: () => ({ authorization: `Bearer ${TOGETHER_KEY}` }),
    integration: () => ({ credentials: { api_key: TOGETHER_KEY }, options: {} }),
    received: () => together.state.requests.length,
  },
];

beforeAll(async () => {
  [openai, azure, bedrock, vertex, fireworks, together] = await Promise.all([
    startFakeOpenAI({ apiKey: OPENAI_KEY }),
    startFakeAzureOpenAI(),
    startFakeBedrock(),
    startFakeVertex(),
    startFakeFireworks({ apiKey: FIREWORKS_KEY, accountId: FIREWORKS_ACCOUNT }),
    startFakeTogether({ apiKey: TOGETHER_KEY }),
  ]);
  gw = await startTestGateway({
    GATEWAY_OPENAI_BASE_URL: openai.url,
    GATEWAY_AZURE_OPENAI_BASE_URL: azure.baseUrlTemplate,
    ...bedrockEndpoints(bedrock),
    ...vertexEndpoints(vertex),
    GATEWAY_FIREWORKS_BASE_URL: fireworks.origin,
    GATEWAY_TOGETHER_BASE_URL: together.url,
    GATEWAY_PROVIDER_TIMEOUT_MS: '2000',
  });
  for (const provider of PROVIDERS) {
    const created = await api(gw, 'POST', '/v1/integrations', { body: { slug: `dots-${provider.name}`, provider: provider.name, ...provider.integration() } });
    expect(created.status).toBe(200);
  }
});

afterAll(async () => {
  await gw?.stop();
  await Promise.all([openai, azure, bedrock, vertex, fireworks, together].map((fake) => fake?.close()));
});

/**
 * A request with its path sent exactly as written: `fetch` (any WHATWG URL) would fold the dot
 * segments before sending, which is the very thing under test. The answer is checked against
 * openapi.yaml as `api()` checks every other.
 */
function raw(method: string, path: string, headers: Record<string, string>): Promise<{ status: number; body: any }> {
  const { hostname, port } = new URL(gw.url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: hostname, port, method, path, headers: { 'x-gateway-api-key': gw.key, ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const body: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        assertDocumentedAnswer(method, path, res.statusCode!, String(res.headers['content-type']), body);
        resolve({ status: res.statusCode!, body });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** Every route family that puts an id into a provider path, and the parameter that names it (REST spells it snake_case). */
const ROUTES = [
  ['GET', (id: string) => `/v1/files/${id}`, 'file_id'],
  ['DELETE', (id: string) => `/v1/files/${id}`, 'file_id'],
  ['GET', (id: string) => `/v1/files/${id}/content`, 'file_id'],
  ['GET', (id: string) => `/v1/fine_tuning/jobs/${id}`, 'job_id'],
  ['POST', (id: string) => `/v1/fine_tuning/jobs/${id}/cancel`, 'job_id'],
  ['GET', (id: string) => `/v1/fine_tuning/jobs/${id}/events`, 'job_id'],
  ['GET', (id: string) => `/v1/fine_tuning/jobs/${id}/checkpoints`, 'job_id'],
] as const;

const DOT_IDS = ['.', '..', '%2E%2E', '%2e.', '.%2E'];

describe.each(PROVIDERS.map((p) => [p.name, p] as const))('%s', (_name, provider) => {
  const modes = [
    ['client mode', () => ({ 'x-gateway-provider': provider.name, ...provider.headers() })],
    ['@slug', () => ({ 'x-gateway-provider': `@dots-${provider.name}` })],
  ] as const;

  it.each(modes)('%s: every route refuses a dot-segment id with 400 invalid_id, and the provider receives nothing', async (_mode, headers) => {
    const before = provider.received();
    for (const [method, path, param] of ROUTES) {
      for (const id of DOT_IDS) {
        const res = await raw(method, path(id), headers());
        expect({ route: `${method} ${path(id)}`, status: res.status, error: res.body.error }).toEqual({
          route: `${method} ${path(id)}`,
          status: 400,
          error: expect.objectContaining({ type: 'invalid_request_error', code: 'invalid_id', param }),
        });
      }
    }
    expect(provider.received()).toBe(before);
  });
});

it('still forwards ordinary ids (the refusal is about dot segments only)', async () => {
  const res = await raw('GET', '/v1/files/file-..abc', { 'x-gateway-provider': 'openai', authorization: `Bearer ${OPENAI_KEY}` });
  expect(res.status).toBe(404);
  expect(res.body.error.type).toBe('provider_error');
  expect(openai.state.requests.at(-1)).toMatchObject({ method: 'GET', path: '/v1/files/file-..abc' });
});
