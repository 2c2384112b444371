/**
 * OpenAI's whole chat request through the gateway with the official SDK, on the four providers whose
 * wire is OpenAI's (OpenAI, Azure OpenAI, Fireworks AI, Together AI; fakes, client mode): the SDK
 * suite (./sdk-suite.ts: tools, runTools, structured outputs), images, several choices, log
 * probabilities, refusals; the body relayed with only `model` replaced (fields the gateway
 * does not know too, for OpenAI and Azure); what a provider cannot carry refused naming field and
 * provider; partials expanded in text only. gatewayFetch validates every answer and chunk against
 * OpenAI's published schema.
 */
import type OpenAI from 'openai';
import { AZURE_TEST_API_KEY, startFakeAzureOpenAI, type FakeAzureOpenAI } from '../fakes/azure-openai-server';
import { startFakeFireworks, type FakeFireworks } from '../fakes/fireworks-server';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { startFakeTogether, type FakeTogether } from '../fakes/together-server';
import { gatewaySdk } from '../support/answers';
import { api, startTestGateway, type TestGateway } from '../support/gateway';
import { streamedText } from './harness';
import { sdkSuite, WEATHER } from './sdk-suite';

const OPENAI_KEY = 'sk-wire-0123456789abcdef';
const FIREWORKS_KEY = 'fw-wire-0123456789abcdef';
const TOGETHER_KEY = 'tg-wire-0123456789abcdef';
const FIREWORKS_ACCOUNT = 'acme';
const TOGETHER_MODEL = 'meta-llama/Meta-Llama-3.1-8B-Instruct-Reference';

let openai: FakeOpenAI;
let azure: FakeAzureOpenAI;
let fireworks: FakeFireworks;
let together: FakeTogether;
let gw: TestGateway;

beforeAll(async () => {
  [openai, azure, fireworks, together] = await Promise.all([
    startFakeOpenAI({ apiKey: OPENAI_KEY }),
    startFakeAzureOpenAI({ pollsToProcessFile: 0 }),
    startFakeFireworks({ apiKey: FIREWORKS_KEY, accountId: FIREWORKS_ACCOUNT }),
    startFakeTogether({ apiKey: TOGETHER_KEY, userId: 'acme', chatModels: [TOGETHER_MODEL] }),
  ]);
  azure.registerDeployment('dep-4o', 'gpt-4o');
  gw = await startTestGateway({
    GATEWAY_OPENAI_BASE_URL: openai.url,
    GATEWAY_AZURE_OPENAI_BASE_URL: azure.baseUrlTemplate,
    GATEWAY_FIREWORKS_BASE_URL: fireworks.origin,
    GATEWAY_TOGETHER_BASE_URL: together.url,
  });
  const partial = await api(gw, 'POST', '/v1/prompts/partials', { body: { name: 'Tone', string: 'Be kind.' } });
  expect(partial.status).toBe(200);
});

afterAll(async () => {
  await gw.stop();
  await Promise.all([openai.close(), azure.close(), fireworks.close(), together.close()]);
});

interface Provider {
  name: string;
  title: string;
  model: string;
  /** What the provider's model answers as (`Answer from <answeredBy>: …`). */
  answeredBy: string;
  headers: Record<string, string>;
  apiKey: string;
  lastBody(): Record<string, any>;
}

const PROVIDERS: Provider[] = [
  {
    name: 'openai',
    title: 'OpenAI',
    model: 'gpt-4o-mini',
    answeredBy: 'gpt-4o-mini',
    headers: { 'x-gateway-provider': 'openai' },
    apiKey: OPENAI_KEY,
    lastBody: () => openai.state.chatRequests.at(-1)!.body,
  },
  {
    name: 'azure-openai',
    title: 'Azure OpenAI',
    model: 'gpt-4o',
    answeredBy: 'gpt-4o',
    headers: { 'x-gateway-provider': 'azure-openai', 'x-gateway-azure-resource-name': 'fake-aoai', 'x-gateway-azure-deployment-id': 'dep-4o' },
    apiKey: AZURE_TEST_API_KEY,
    lastBody: () => azure.state.chatRequests.at(-1)!.body,
  },
  {
    name: 'fireworks-ai',
    title: 'Fireworks AI',
    model: 'llama-v3p1-8b-instruct',
    answeredBy: 'accounts/fireworks/models/llama-v3p1-8b-instruct',
    headers: { 'x-gateway-provider': 'fireworks-ai', 'x-gateway-fireworks-account-id': FIREWORKS_ACCOUNT },
    apiKey: FIREWORKS_KEY,
    lastBody: () => fireworks.state.chatRequests.at(-1)!,
  },
  {
    name: 'together-ai',
    title: 'Together AI',
    model: TOGETHER_MODEL,
    answeredBy: TOGETHER_MODEL,
    headers: { 'x-gateway-provider': 'together-ai' },
    apiKey: TOGETHER_KEY,
    lastBody: () => together.state.chatRequests.at(-1)!,
  },
];

const sdkFor = (p: Provider) => gatewaySdk(gw, { apiKey: p.apiKey, headers: p.headers });

describe.each(PROVIDERS)('$title', (p) => {
  sdkSuite(() => ({ model: p.model, answeredBy: p.answeredBy, client: () => sdkFor(p) }));

  it('relays a tool round trip with the body as sent, the model replaced', async () => {
    const client = sdkFor(p);
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Paris' }];
    const first = await client.chat.completions.create({ model: p.model, messages, tools: [WEATHER], tool_choice: 'auto' });
    expect(p.lastBody()).toMatchObject({ messages, tools: [WEATHER], tool_choice: 'auto' });
    const { message } = first.choices[0];
    const call = message.tool_calls![0];
    messages.push(message, { role: 'tool', tool_call_id: call.id, content: 'Sunny' });
    await client.chat.completions.create({ model: p.model, messages, tools: [WEATHER] });
    expect(p.lastBody().messages.slice(1)).toEqual([
      { role: 'assistant', content: null, refusal: null, tool_calls: [call] },
      { role: 'tool', tool_call_id: call.id, content: 'Sunny' },
    ]);
  });

  it('passes images on, as data: URLs and as URLs the provider fetches itself', async () => {
    const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex').toString('base64');
    const content: OpenAI.Chat.Completions.ChatCompletionContentPart[] = [
      { type: 'text', text: 'What is this? ' },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${png}`, detail: 'low' } },
      { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
    ];
    const completion = await sdkFor(p).chat.completions.create({ model: p.model, messages: [{ role: 'user', content }] });
    expect(completion.choices[0].message.content).toBe(
      `Answer from ${p.answeredBy}: What is this? [image image/png 16 bytes][image https://example.com/cat.jpg]`,
    );
    expect(p.lastBody().messages).toEqual([{ role: 'user', content }]);
  });

  it('answers several choices, and a refusal as OpenAI does', async () => {
    const client = sdkFor(p);
    const two = await client.chat.completions.create({ model: p.model, messages: [{ role: 'user', content: 'Twice' }], n: 2 });
    expect(two.choices.map((c) => [c.index, c.message.content])).toEqual([
      [0, `Answer from ${p.answeredBy}: Twice`],
      [1, `Answer from ${p.answeredBy}: Twice`],
    ]);
    const streamed = await client.chat.completions.create({ model: p.model, messages: [{ role: 'user', content: 'Twice' }], n: 2, stream: true });
    const { chunks } = await streamedText(streamed);
    const textOf = (index: number) =>
      chunks.flatMap((c) => c.choices.filter((choice) => choice.index === index).map((choice) => choice.delta.content ?? '')).join('');
    expect([textOf(0), textOf(1)]).toEqual([`Answer from ${p.answeredBy}: Twice`, `Answer from ${p.answeredBy}: Twice`]);

    const refused = await client.chat.completions.create({ model: p.model, messages: [{ role: 'user', content: 'REFUSE this' }] });
    expect(refused.choices[0].message).toMatchObject({ content: null, refusal: "I'm sorry, I can't help with that." });
  });

  it('expands partials in text content only, never in tool arguments or schemas', async () => {
    const client = sdkFor(p);
    const schema = { type: 'object', description: '{{>tone}}', properties: { note: { type: 'string' } }, required: ['note'], additionalProperties: false };
    await client.chat.completions.create({
      model: p.model,
      messages: [
        { role: 'system', content: [{ type: 'text', text: '{{>tone}}' }] },
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'note', arguments: '{"note":"{{>tone}}"}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: 'noted {{>tone}}' },
      ],
      response_format: { type: 'json_schema', json_schema: { name: 'note', schema, strict: true } },
    });
    const body = p.lastBody();
    expect(body.messages[0].content).toEqual([{ type: 'text', text: 'Be kind.' }]);
    expect(body.messages[2].tool_calls[0].function.arguments).toBe('{"note":"{{>tone}}"}');
    expect(body.messages[3].content).toBe('noted Be kind.');
    expect(body.response_format.json_schema.schema).toEqual(schema);
  });
});

describe('fields by provider', () => {
  const ask = (p: Provider, body: Record<string, unknown>) =>
    api(gw, 'POST', '/v1/chat/completions', {
      headers: { ...p.headers, authorization: `Bearer ${p.apiKey}` },
      body: { model: p.model, messages: [{ role: 'user', content: 'Hi' }], ...body },
    });
  const [openaiP, azureP, fireworksP, togetherP] = PROVIDERS;

  it('passes fields it does not know on to OpenAI and Azure untouched', async () => {
    const extra = { prediction: { type: 'content', content: 'Hi' }, verbosity: 'low', safety_identifier: 'u-1' };
    for (const p of [openaiP, azureP]) {
      const res = await ask(p, {
        ...extra,
        metadata: { Team: 'a' },
        store: true,
        service_tier: 'flex',
        reasoning_effort: 'low',
        logit_bias: { '50256': -100 },
      });
      expect(res.status).toBe(200);
      expect(p.lastBody()).toMatchObject({ ...extra, metadata: { Team: 'a' }, store: true, service_tier: 'flex', reasoning_effort: 'low' });
    }
  });

  it.each([
    [fireworksP, { logit_bias: { '1': 5 } }, 'logit_bias'],
    [fireworksP, { prediction: { type: 'content', content: 'x' } }, 'prediction'],
    [togetherP, { logprobs: true }, 'logprobs'],
    [togetherP, { metadata: { a: 'b' } }, 'metadata'],
  ])('refuses what %s cannot carry, naming the field and the provider', async (p, body, param) => {
    const before = JSON.stringify(p.lastBody());
    const res = await ask(p, body);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'unsupported_parameter', param });
    expect(res.body.error.message).toContain(p.title);
    expect(JSON.stringify(p.lastBody())).toBe(before);
  });

  it('answers log probabilities where the provider gives them', async () => {
    const client = sdkFor(openaiP);
    const completion = await client.chat.completions.create({
      model: openaiP.model,
      messages: [{ role: 'user', content: 'Two words' }],
      logprobs: true,
      top_logprobs: 2,
    });
    const tokens = completion.choices[0].logprobs?.content ?? [];
    expect(tokens.map((t) => t.token).join('')).toBe(completion.choices[0].message.content);
    expect(tokens[0].top_logprobs).toHaveLength(2);
    expect(completion.usage).toMatchObject({ prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0 } });
    const stream = await client.chat.completions.create({
      model: openaiP.model,
      messages: [{ role: 'user', content: 'Two words' }],
      logprobs: true,
      stream: true,
    });
    const { chunks } = await streamedText(stream);
    expect(
      chunks
        .flatMap((c) => c.choices[0]?.logprobs?.content ?? [])
        .map((t) => t.token)
        .join(''),
    ).toBe(`Answer from gpt-4o-mini: Two words`);
  });

  it('validates known fields in the error shape', async () => {
    const bad = await ask(openaiP, { tool_choice: { type: 'function', function: { name: 'nope' } }, tools: [WEATHER] });
    expect(bad.body.error).toMatchObject({ type: 'invalid_request_error', param: 'tool_choice.function.name' });
    const image = await ask(openaiP, { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'x', detail: 'huge' } }] }] });
    expect(image.body.error).toMatchObject({ param: 'messages.0.content.0.image_url.detail' });
  });
});
