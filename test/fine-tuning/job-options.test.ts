/**
 * Job options (`provider_options`) belong to each provider: the provider a job runs at takes the
 * options its module declares and refuses any other with a 400 naming the option and the provider —
 * hosted (REST and GraphQL) and in client mode — and the served OpenAPI document lists them from the
 * same declarations. No provider is reached: every case is decided before a call (the providers'
 * base URLs point at a closed port).
 */
import { toFile } from 'openai';
import { restPath } from '../../src/http/case';
import { PROVIDERS } from '../../src/providers/registry';
import { api, startTestGateway, type TestGateway } from '../support/gateway';
import { assertDocumentedRequest, openApiDocument } from '../support/openapi';
import { closedPort, dataset, sdk } from './harness';

let gw: TestGateway;
let trainingFileId: string;

beforeAll(async () => {
  const nowhere = `http://127.0.0.1:${await closedPort()}`;
  gw = await startTestGateway({ GATEWAY_OPENAI_BASE_URL: nowhere, GATEWAY_TOGETHER_BASE_URL: nowhere, GATEWAY_JOB_POLL_MS: '60000' });
  for (const [slug, provider] of [
    ['my-openai', 'openai'],
    ['my-together', 'together-ai'],
  ]) {
    const res = await api(gw, 'POST', '/v1/integrations', { body: { slug, provider, credentials: { api_key: 'sk-test-0123456789' } } });
    expect(res.status).toBe(200);
  }
  trainingFileId = (await sdk(gw).files.create({ file: await toFile(Buffer.from(dataset()), 'train.jsonl'), purpose: 'fine-tune' })).id;
});

afterAll(() => gw.stop());

const createJob = (slug: string, providerOptions: unknown) =>
  api(gw, 'POST', '/v1/fine_tuning/jobs', {
    body: { model: 'base-model', training_file: trainingFileId, gateway_options: { 'x-gateway-provider': slug }, provider_options: providerOptions },
  });

const gql = (query: string, variables: Record<string, unknown>) => api(gw, 'POST', '/graphql', { body: { query, variables } });
const CREATE = `mutation($input: CreateFineTuningJobInput!) { createFineTuningJob(input: $input) { id } }`;

describe('provider_options', () => {
  it("takes the options of the job's provider, with their types", async () => {
    const res = await createJob('@my-together', { learning_rate: 0.0001, training_type: 'lora', model: 'together/base' });
    expect(res.status).toBe(200);
    const row = await gw.gateway.services.db.prisma.fineTuningJob.findUnique({ where: { id: res.body.id } });
    expect(row).toMatchObject({ providerModel: 'together/base', providerOptions: { learningRate: 0.0001, trainingType: 'lora' } });
  });

  it.each([
    ['@my-openai', { role_arn: 'arn:aws:iam::1:role/x' }, 'provider_options.role_arn', 'OpenAI'],
    ['@my-openai', { learning_rate: 0.001 }, 'provider_options.learning_rate', 'OpenAI'],
    ['@my-together', { output_file: 's3://bucket/out/' }, 'provider_options.output_file', 'Together AI'],
  ])('refuses an option %s does not take, naming it and the provider', async (slug, options, param, title) => {
    const res = await createJob(slug, options);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', param, code: 'unsupported_parameter' });
    expect(res.body.error.message).toContain(title);
  });

  it('refuses a value of the wrong type, naming the option', async () => {
    const res = await createJob('@my-together', { learning_rate: '0.001' });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ param: 'provider_options.learning_rate', message: expect.stringContaining('must be a number') });
  });

  it('refuses them in client mode too, before any call to the provider', async () => {
    const res = await api(gw, 'POST', '/v1/fine_tuning/jobs', {
      headers: { 'x-gateway-provider': 'openai', authorization: 'Bearer sk-test-0123456789' },
      body: { model: 'gpt-4o-mini', training_file: 'file-abc', provider_options: { training_type: 'full' } },
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ param: 'provider_options.training_type', code: 'unsupported_parameter' });
  });

  it('are a JSON map in GraphQL, learningRate included', async () => {
    const input = { model: 'base-model', trainingFile: trainingFileId, integration: '@my-together' };
    const taken = await gql(CREATE, { input: { ...input, providerOptions: { learningRate: 0.0002 } } });
    expect(taken.body.errors).toBeUndefined();
    const refused = await gql(CREATE, { input: { ...input, providerOptions: { roleArn: 'arn:aws:iam::1:role/x' } } });
    expect(refused.body.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', param: 'providerOptions.roleArn' });
    expect(refused.body.errors[0].message).toContain('Together AI');
  });
});

describe('the OpenAPI document', () => {
  it("lists each provider's options from its declaration, with their types", () => {
    const byTitle = Object.fromEntries(openApiDocument.components.schemas.ProviderOptions.anyOf.filter((s: any) => s.title).map((s: any) => [s.title, s]));
    expect(byTitle['Together AI'].properties.learning_rate).toMatchObject({ type: 'number' });
    for (const provider of PROVIDERS) {
      const declared = Object.keys(provider.jobOptions?.shape ?? {}).map((key) => restPath([key]));
      expect(Object.keys(byTitle[provider.title].properties)).toEqual(['model', ...declared]);
    }
    expect(Object.keys(byTitle.OpenAI.properties)).toEqual(['model']);
  });

  it('checks the requests the tests send: an option of no provider, or a value of the wrong type, does not match', () => {
    const body = (options: unknown) => ({ model: 'm', training_file: 'f', provider_options: options });
    const check = (options: unknown) => () => assertDocumentedRequest('POST', '/v1/fine_tuning/jobs', 'application/json', body(options));
    expect(check({ learning_rate: 0.001 })).not.toThrow();
    expect(check({ learning_rate: 'fast' })).toThrow(/does not match openapi.yaml/);
    expect(check({ no_such_option: 1 })).toThrow(/does not match openapi.yaml/);
  });
});
