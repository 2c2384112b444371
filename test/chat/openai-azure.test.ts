/**
 * Chat completions and models with the official OpenAI SDK, after hosted jobs succeed at the fake
 * OpenAI and the fake Azure OpenAI: the answer comes from the job's provider with the job's
 * credentials and model, streamed or not; prompt partials are expanded on the way; tenancy, provider
 * errors, deployments and a client dropping a stream; client mode with headers and with `@slug`.
 */
import { randomBytes } from 'node:crypto';
import OpenAI from 'openai';
import { AZURE_TEST_API_KEY, startFakeAzureOpenAI, type FakeAzureOpenAI } from '../fakes/azure-openai-server';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import {
  createAzureIntegration,
  createIntegration,
  createTestDatabase,
  eventually,
  newKey,
  sdk,
  startHostedGateway,
  tempDir,
  type HostedGateway,
} from '../fine-tuning/harness';
import { gatewayFetch, gatewaySdk } from '../support/answers';
import { api, createOrganisation } from '../support/gateway';
import { expectLedgered } from '../usage/harness';
import { sseData, streamedText, succeededJob } from './harness';
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

describe('provider mode: a model of a succeeded OpenAI job', () => {
  it('answers a chat completion from the job’s provider with the job’s credentials and model', async () => {
    const completion = await client.chat.completions.create({ model: openaiJob.model, messages: [{ role: 'user', content: 'Hello there' }] });
    expect(completion).toMatchObject({
      object: 'chat.completion',
      model: openaiJob.model,
      choices: [{ index: 0, message: { role: 'assistant', content: `Answer from ${openaiJob.model}: Hello there` }, finish_reason: 'stop' }],
      usage: { prompt_tokens: expect.any(Number), completion_tokens: expect.any(Number), total_tokens: expect.any(Number) },
    });
    expect(lastOpenAIRequest().model).toBe(openaiJob.model);
    expect(lastOpenAIRequest().headers.authorization).toBe(`Bearer ${SECRET}`);
    // The gateway key never travels to the provider.
    expect(lastOpenAIRequest().headers['x-gateway-api-key']).toBeUndefined();
  });

  it('streams the answer chunk by chunk, with usage when asked for', async () => {
    const stream = await client.chat.completions.create({
      model: openaiJob.model,
      messages: [{ role: 'user', content: 'Stream me three words' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const { text, chunks } = await streamedText(stream);
    expect(text).toBe(`Answer from ${openaiJob.model}: Stream me three words`);
    expect(chunks.length).toBeGreaterThan(4);
    expect(chunks[0].choices[0].delta.role).toBe('assistant');
    expect(chunks.every((c) => c.object === 'chat.completion.chunk' && c.model === openaiJob.model && c.id === chunks[0].id)).toBe(true);
    expect(chunks.some((c) => c.choices[0]?.finish_reason === 'stop')).toBe(true);
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { total_tokens: expect.any(Number) } });
    expect(lastOpenAIRequest().body).toMatchObject({ stream: true, model: openaiJob.model });
  });

  it('ends a plain stream with [DONE] and sends no usage chunk unless asked', async () => {
    const res = await gatewayFetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-api-key': gw.key },
      body: JSON.stringify({ model: openaiJob.model, messages: [{ role: 'user', content: 'Hi' }], stream: true }),
    });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = await sseData(res);
    expect(events.at(-1)).toBe('[DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e));
    expect(chunks.every((c) => c.choices.length === 1 && c.usage === undefined)).toBe(true);
  });

  it('accepts the gateway job id as the model, and answers with the model the caller named', async () => {
    const completion = await client.chat.completions.create({ model: openaiJob.id, messages: [{ role: 'user', content: 'By id' }] });
    expect(completion.model).toBe(openaiJob.id);
    expect(completion.choices[0].message.content).toBe(`Answer from ${openaiJob.model}: By id`);
    expect(lastOpenAIRequest().model).toBe(openaiJob.model);
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

  it('relays a provider 429 as 429 provider_error', async () => {
    fake.failNext('POST', '/v1/chat/completions', 429, { message: 'Rate limit reached for requests' });
    const res = await api(gw, 'POST', '/v1/chat/completions', { body: { model: openaiJob.model, messages: [{ role: 'user', content: 'Hi' }] } });
    expectError(res, 429, { type: 'provider_error' });
    expect(res.body.error.message).toContain('Rate limit reached');
    expect(JSON.stringify(res.body)).not.toContain(SECRET);
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

  it('ends a stream that fails midway with an error event in the error shape, which the SDK raises', async () => {
    fake.failNextStream(3, 'The model crashed midway');
    const stream = await client.chat.completions.create({ model: openaiJob.model, messages: [{ role: 'user', content: 'one two three four' }], stream: true });
    const received: string[] = [];
    const failure = await (async () => {
      for await (const chunk of stream) received.push(chunk.choices[0]?.delta.content ?? '');
    })().catch((err: unknown) => err);
    expect(received.join('')).toBe('Answer from ');
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    expect((failure as InstanceType<typeof OpenAI.APIError>).error).toEqual({
      message: 'OpenAI failed while streaming: The model crashed midway',
      type: 'provider_error',
      param: null,
      code: 'provider_error',
    });
  });

  it('stops the upstream call when the client drops the stream', async () => {
    fake.setStreamDelay(100);
    try {
      const abandoned = fake.state.abandonedStreams;
      const cancel = new AbortController();
      const res = await gatewayFetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-gateway-api-key': gw.key },
        body: JSON.stringify({ model: openaiJob.model, messages: [{ role: 'user', content: 'a long answer with many words in it' }], stream: true }),
        signal: cancel.signal,
      });
      const reader = res.body!.getReader();
      const first = await reader.read();
      expect(new TextDecoder().decode(first.value)).toMatch(/^data: /);
      cancel.abort();
      await eventually(async () => (fake.state.abandonedStreams > abandoned ? true : undefined), 5_000);
    } finally {
      fake.setStreamDelay(0);
    }
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
  const azureHeaders = { 'x-gateway-azure-deployment-id': 'ft-deployment' };

  it('needs a deployment: 400 deployment_required saying what to provision', async () => {
    const res = await api(gw, 'POST', '/v1/chat/completions', { body: { model: azureJob.model, messages: [{ role: 'user', content: 'Hi' }] } });
    expectError(res, 400, { type: 'invalid_request_error', code: 'deployment_required', param: 'x-gateway-azure-deployment-id' });
    expect(res.body.error.message).toContain(azureJob.model);
  });

  it('answers on the named deployment with the integration’s key, streamed or not', async () => {
    const azureClient = sdk(gw);
    const completion = await azureClient.chat.completions.create(
      { model: azureJob.model, messages: [{ role: 'user', content: 'Hi Azure' }] },
      { headers: azureHeaders },
    );
    expect(completion.choices[0].message.content).toBe(`Answer from ${azureJob.model}: Hi Azure`);
    const request = azure.state.chatRequests.at(-1)!;
    expect(request).toMatchObject({ resource: 'fake-aoai', deployment: 'ft-deployment', apiVersion: '2024-10-21' });
    expect(request.headers['api-key']).toBe(AZURE_TEST_API_KEY);

    const stream = await azureClient.chat.completions.create(
      { model: azureJob.model, messages: [{ role: 'user', content: 'Stream Azure' }], stream: true, stream_options: { include_usage: true } },
      { headers: azureHeaders },
    );
    const { text, chunks } = await streamedText(stream);
    expect(text).toBe(`Answer from ${azureJob.model}: Stream Azure`);
    expect(chunks[0].id).toMatch(/\S/);
    expect(chunks.at(-1)?.usage?.total_tokens).toBeGreaterThan(0);
    // The usage ledger holds both calls with the tokens Azure reported.
    await expectLedgered(gw, 'azure-openai', [
      { streamed: false, usage: completion.usage },
      { streamed: true, usage: chunks.at(-1)?.usage },
    ]);
  });
});

describe('client mode', () => {
  it('calls the provider named in x-gateway-provider with the caller’s own key', async () => {
    const direct = gatewaySdk(gw, { apiKey: SECRET, headers: { 'x-gateway-provider': 'openai' } });
    const completion = await direct.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: '{{>support-tone}}' },
        { role: 'user', content: 'Direct' },
      ],
    });
    expect(completion.choices[0].message.content).toBe('Answer from gpt-4o-mini: Direct');
    expect(lastOpenAIRequest().body.messages).toEqual([
      { role: 'system', content: 'Be kind and patient.' },
      { role: 'user', content: 'Direct' },
    ]);
    const stream = await direct.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Streamed' }], stream: true });
    expect((await streamedText(stream)).text).toBe('Answer from gpt-4o: Streamed');
  });

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
