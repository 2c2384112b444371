/**
 * Chat completions and models with the official OpenAI SDK, after hosted jobs succeed at the fake
 * OpenAI and the fake Azure OpenAI: the chat contract (support/chat-kit.ts) on each job's model,
 * answered by the job's provider with the job's credentials (its 429, a stream failing midway, a
 * client dropping a stream); and what hosted chat adds: the job id as the model, the models listed,
 * prompt partials expanded on the way, tenancy, Azure's deployments, client mode with `@slug`.
 */
import { randomBytes } from 'node:crypto';
import type OpenAI from 'openai';
import { AZURE_TEST_API_KEY, startFakeAzureOpenAI, type FakeAzureOpenAI } from '../fakes/azure-openai-server';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import {
  createAzureIntegration,
  createIntegration,
  createTestDatabase,
  newKey,
  sdk,
  startHostedGateway,
  tempDir,
  type HostedGateway,
} from '../fine-tuning/harness';
import { gatewaySdk } from '../support/answers';
import { chatContract } from '../support/chat-kit';
import { api, createOrganisation } from '../support/gateway';
import { succeededJob } from './harness';
import { expectError } from '../support/expect';
import { openAIWireSent, toolRequestCase } from './sdk-suite';

const SECRET = `sk-fake-${randomBytes(12).toString('hex')}`;

let fake: FakeOpenAI;
let azure: FakeAzureOpenAI;
let gw: HostedGateway;
let data: { dir: string; remove(): Promise<void> };
let client: OpenAI;
let openaiJob: { id: string; model: string };
let azureJob: { id: string; model: string };
const statements: string[] = [];

beforeAll(async () => {
  fake = await startFakeOpenAI({ apiKey: SECRET });
  azure = await startFakeAzureOpenAI({ pollsToProcessFile: 0 });
  data = await tempDir('gw-chat-');
  gw = await startHostedGateway({
    fake,
    database: await createTestDatabase(),
    dataDir: data.dir,
    key: newKey(),
    env: { GATEWAY_AZURE_OPENAI_BASE_URL: azure.baseUrlTemplate },
    onQuery: (sql) => void statements.push(sql),
  });
  client = sdk(gw);
  await createIntegration(gw, 'my-openai', SECRET);
  await createAzureIntegration(gw, 'my-azure');
  [openaiJob, azureJob] = await Promise.all([succeededJob(client, '@my-openai'), succeededJob(client, '@my-azure')]);
  azure.registerDeployment('ft-deployment', azureJob.model);
  const partial = await api(gw, 'POST', '/v1/prompts/partials', { body: { name: 'Support tone', string: 'Be kind and patient.' } });
  expect(partial.body.slug).toBe('support-tone');
});

afterAll(async () => {
  await gw.stop();
  await gw.database.drop();
  await fake.close();
  await azure.close();
  await data.remove();
});

const lastOpenAIRequest = () => fake.state.chatRequests.at(-1)!;

chatContract('OpenAI, hosted: the model of a succeeded job', {
  provider: 'openai',
  title: 'OpenAI',
  target: () => ({ gw, model: openaiJob.model }),
  received: lastOpenAIRequest,
  calls: () => fake.state.chatRequests.length,
  answers: {
    sent: () => ({ model: openaiJob.model, headers: { authorization: `Bearer ${SECRET}` } }),
    streamed: () => ({ body: { stream: true, model: openaiJob.model } }),
  },
  throttled: {
    inject: () => fake.failNext('POST', '/v1/chat/completions', 429, { message: 'Rate limit reached for requests' }),
    error: { message: /Rate limit reached/ },
    secret: SECRET,
  },
  failsMidway: {
    inject: () => fake.failNextStream(3, 'The model crashed midway'),
    before: 'Answer from ',
    error: { message: 'OpenAI failed while streaming: The model crashed midway', type: 'provider_error', param: null, code: 'provider_error' },
  },
  dropped: { delay: (ms) => fake.setStreamDelay(ms), abandoned: () => fake.state.abandonedStreams },
});

chatContract('Azure OpenAI, hosted: the model of a succeeded job on its deployment', {
  provider: 'azure-openai',
  title: 'Azure OpenAI',
  target: () => ({ gw, model: azureJob.model, headers: { 'x-gateway-azure-deployment-id': 'ft-deployment' } }),
  received: () => azure.state.chatRequests.at(-1)!,
  calls: () => azure.state.chatRequests.length,
  answers: {
    sent: { resource: 'fake-aoai', deployment: 'ft-deployment', apiVersion: '2024-10-21', headers: { 'api-key': AZURE_TEST_API_KEY } },
    streamed: { deployment: 'ft-deployment', body: { stream: true } },
  },
});

describe('provider mode: a model of a succeeded OpenAI job', () => {
  it('accepts the gateway job id as the model, and answers with the model the caller named', async () => {
    const completion = await client.chat.completions.create({ model: openaiJob.id, messages: [{ role: 'user', content: 'By id' }] });
    expect(completion.model).toBe(openaiJob.id);
    expect(completion.choices[0].message.content).toBe(`Answer from ${openaiJob.model}: By id`);
    expect(lastOpenAIRequest().model).toBe(openaiJob.model);
    // The gateway key never travels to the provider.
    expect(lastOpenAIRequest().headers['x-gateway-api-key']).toBeUndefined();
  });

  it('lists and retrieves the workspace’s fine-tuned models', async () => {
    const ids = [];
    for await (const model of client.models.list()) ids.push(model.id);
    expect(ids).toEqual(expect.arrayContaining([openaiJob.model, azureJob.model]));
    const retrieved = await client.models.retrieve(openaiJob.model);
    expect(retrieved).toEqual({ id: openaiJob.model, object: 'model', created: expect.any(Number), owned_by: expect.any(String) });
    const missing = await api(gw, 'GET', `/v1/models/${encodeURIComponent('ft:gpt-4o:nobody::x')}`);
    expectError(missing, 404, { type: 'not_found_error', code: 'model_not_found' });
  });

  it('expands {{>support-tone}} to the partial’s default text before calling the provider', async () => {
    await client.chat.completions.create({
      model: openaiJob.model,
      messages: [
        { role: 'system', content: '{{>support-tone}} Answer in {{ language }}.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Tone: ' },
            { type: 'text', text: '{{> support-tone }}' },
          ],
        },
      ],
    });
    const sent = lastOpenAIRequest().body.messages as { role: string; content: string }[];
    expect(sent).toEqual([
      { role: 'system', content: 'Be kind and patient. Answer in {{ language }}.' },
      // Text parts stay parts (the body is relayed as sent), each expanded.
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Tone: ' },
          { type: 'text', text: 'Be kind and patient.' },
        ],
      },
    ]);
  });

  it('looks up every partial of a request in one statement', async () => {
    await api(gw, 'POST', '/v1/prompts/partials', { body: { name: 'Sign off', string: 'Thanks!' } });
    statements.length = 0;
    await client.chat.completions.create({
      model: openaiJob.model,
      messages: [
        { role: 'system', content: '{{>support-tone}}' },
        { role: 'user', content: 'Hi {{>sign-off}} {{>support-tone}}' },
      ],
    });
    expect(lastOpenAIRequest().body.messages).toEqual([
      { role: 'system', content: 'Be kind and patient.' },
      { role: 'user', content: 'Hi Thanks! Be kind and patient.' },
    ]);
    expect(statements.filter((sql) => sql.includes('prompt_partials'))).toHaveLength(1);
  });

  it('refuses an unknown partial with a 400 naming it, before any provider call', async () => {
    const before = fake.state.chatRequests.length;
    const res = await api(gw, 'POST', '/v1/chat/completions', {
      body: {
        model: openaiJob.model,
        messages: [
          { role: 'user', content: 'Hi' },
          { role: 'user', content: '{{>no-such-partial}}' },
        ],
      },
    });
    expectError(res, 400, { type: 'invalid_request_error', code: 'partial_not_found', param: 'messages.1.content' });
    expect(res.body.error.message).toContain("'no-such-partial'");
    expect(fake.state.chatRequests.length).toBe(before);
  });

  it('answers 404 for another workspace’s or organisation’s model, exactly like an unknown one', async () => {
    const ws = await api(gw, 'POST', '/v1/admin/workspaces', { body: { name: 'Chat other', slug: 'chat-other' } });
    expect(ws.status).toBe(200);
    const messages = [{ role: 'user', content: 'Hi' }];
    const otherWorkspace = await api(gw, 'POST', '/v1/chat/completions', { body: { model: openaiJob.model, messages, workspace_id: 'chat-other' } });
    const unknown = await api(gw, 'POST', '/v1/chat/completions', { body: { model: 'ft:gpt-4o-mini:unknown', messages } });
    const org = await createOrganisation(gw);
    const otherOrg = await api(org, 'POST', '/v1/chat/completions', { body: { model: openaiJob.model, messages } });
    for (const res of [otherWorkspace, otherOrg]) {
      expectError(res, 404, { type: 'not_found_error', code: 'model_not_found', param: 'model' });
      expect(res.body.error.message).toBe(unknown.body.error.message.replace('ft:gpt-4o-mini:unknown', openaiJob.model));
    }
    const listed = await api(org, 'GET', '/v1/models');
    expect(listed.body).toEqual({ object: 'list', data: [] });
  });

  it('validates the request in the error shape', async () => {
    const bad = await api(gw, 'POST', '/v1/chat/completions', { body: { model: openaiJob.model, messages: [] } });
    expectError(bad, 400, { type: 'invalid_request_error', code: 'invalid_request', param: 'messages' });
    const tools = await api(gw, 'POST', '/v1/chat/completions', { body: { model: openaiJob.model, messages: [{ role: 'user', content: 'x' }], tools: [] } });
    expectError(tools, 400, { type: 'invalid_request_error', code: 'invalid_request', param: 'tools' });
    const options = await api(gw, 'POST', '/v1/chat/completions', {
      body: { model: openaiJob.model, messages: [{ role: 'user', content: 'x' }], stream_options: { include_usage: true } },
    });
    expectError(options, 400, { type: 'invalid_request_error', param: 'stream_options' });
  });
});

describe('provider mode: tools and structured outputs', () => {
  const openaiSent = () => openAIWireSent(lastOpenAIRequest().body);
  const azureSent = () => openAIWireSent(azure.state.chatRequests.at(-1)!.body);
  const azureClient = () => gatewaySdk(gw, { headers: { 'x-gateway-azure-deployment-id': 'ft-deployment' } });
  toolRequestCase('OpenAI fine-tuned model', () => ({ model: openaiJob.model, client: () => client, sent: openaiSent }));
  toolRequestCase('OpenAI @slug/model', () => ({ model: '@my-openai/gpt-4o-mini', client: () => client, sent: openaiSent }));
  toolRequestCase('Azure OpenAI fine-tuned model', () => ({ model: azureJob.model, client: azureClient, sent: azureSent }));
  // Without a deployment header, Azure takes the model for the deployment's name.
  toolRequestCase('Azure OpenAI @slug/deployment', () => ({ model: '@my-azure/ft-deployment', client: () => client, sent: azureSent }));
});

describe('provider mode: a model of a succeeded Azure OpenAI job', () => {
  it('needs a deployment: 400 deployment_required saying what to provision', async () => {
    const res = await api(gw, 'POST', '/v1/chat/completions', { body: { model: azureJob.model, messages: [{ role: 'user', content: 'Hi' }] } });
    expectError(res, 400, { type: 'invalid_request_error', code: 'deployment_required', param: 'x-gateway-azure-deployment-id' });
    expect(res.body.error.message).toContain(azureJob.model);
  });
});

describe('client mode', () => {
  it('calls a stored integration named @slug, with settings from headers', async () => {
    azure.registerDeployment('base-4o', 'gpt-4o');
    const res = await api(gw, 'POST', '/v1/chat/completions', {
      headers: { 'x-gateway-provider': '@my-azure', 'x-gateway-azure-deployment-id': 'base-4o' },
      body: { model: 'gpt-4o', messages: [{ role: 'user', content: 'Via slug' }] },
    });
    expect(res.status).toBe(200);
    expect(res.body.choices[0].message.content).toBe('Answer from gpt-4o: Via slug');
    expect(azure.state.chatRequests.at(-1)?.deployment).toBe('base-4o');
  });

  it('takes the model for the Azure deployment when none is named, and relays Azure’s 404 with what to do', async () => {
    azure.registerDeployment('base-4o', 'gpt-4o');
    const ask = (model: string) =>
      api(gw, 'POST', '/v1/chat/completions', {
        headers: { 'x-gateway-provider': '@my-azure' },
        body: { model, messages: [{ role: 'user', content: 'As model' }] },
      });
    const named = await ask('base-4o');
    expect(named.status).toBe(200);
    expect(azure.state.chatRequests.at(-1)?.deployment).toBe('base-4o');
    const unknown = await ask('not-deployed');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({ type: 'provider_error', code: 'DeploymentNotFound' });
    expect(unknown.body.error.message).toMatch(
      /^Azure OpenAI: .*\(no deployment is named not-deployed: deploy it on the resource and name the deployment in x-gateway-azure-deployment-id\)$/,
    );
  });
});
