/**
 * OpenAI's whole chat request through the gateway with the official SDK, on the four providers whose
 * wire is OpenAI's (OpenAI, Azure OpenAI, Fireworks AI, Together AI; fakes, client mode): the chat
 * contract (support/chat-kit.ts: answers and usage, the SDK suite, images, what a provider cannot
 * carry refused naming field and provider, a dropped stream), and what the OpenAI wire adds: the
 * body relayed with only `model` replaced (fields the gateway does not know too, for OpenAI and
 * Azure), several choices, log probabilities, refusals, partials expanded in text only. gatewayFetch validates every answer and chunk against
 * OpenAI's published schema.
 */
import type OpenAI from 'openai';
import { AZURE_TEST_API_KEY, startFakeAzureOpenAI, type FakeAzureOpenAI } from '../fakes/azure-openai-server';
import { startFakeFireworks, type FakeFireworks } from '../fakes/fireworks-server';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { startFakeTogether, type FakeTogether } from '../fakes/together-server';
import { ANSWER_REQUEST, askChat, chatClient, chatContract, type ChatCases } from '../support/chat-kit';
import { api, startTestGateway, type TestGateway } from '../support/gateway';
import { streamedText } from './harness';
import { WEATHER } from './sdk-suite';

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

/** The chat contract's cases on each provider, in client mode with its key and settings in headers. */
const PROVIDERS: Array<Pick<ChatCases, 'provider' | 'title' | 'target' | 'received' | 'calls' | 'refused' | 'dropped' | 'logprobs'>> = [
  {
    provider: 'openai',
    title: 'OpenAI',
    target: () => ({ gw, model: 'gpt-4o-mini', headers: { 'x-gateway-provider': 'openai' }, apiKey: OPENAI_KEY }),
    received: () => openai.state.chatRequests.at(-1)!.body,
    calls: () => openai.state.chatRequests.length,
    dropped: { delay: (ms) => openai.setStreamDelay(ms), abandoned: () => openai.state.abandonedStreams },
    logprobs: { sent: { logprobs: true, top_logprobs: 2 } },
  },
  {
    provider: 'azure-openai',
    title: 'Azure OpenAI',
    target: () => ({
      gw,
      model: 'gpt-4o',
      headers: { 'x-gateway-provider': 'azure-openai', 'x-gateway-azure-resource-name': 'fake-aoai', 'x-gateway-azure-deployment-id': 'dep-4o' },
      apiKey: AZURE_TEST_API_KEY,
    }),
    received: () => azure.state.chatRequests.at(-1)!.body,
    calls: () => azure.state.chatRequests.length,
    dropped: { delay: (ms) => azure.setStreamDelay(ms), abandoned: () => azure.state.abandonedStreams },
  },
  {
    provider: 'fireworks-ai',
    title: 'Fireworks AI',
    target: () => ({
      gw,
      model: 'llama-v3p1-8b-instruct',
      answeredBy: 'accounts/fireworks/models/llama-v3p1-8b-instruct',
      headers: { 'x-gateway-provider': 'fireworks-ai', 'x-gateway-fireworks-account-id': FIREWORKS_ACCOUNT },
      apiKey: FIREWORKS_KEY,
    }),
    received: () => fireworks.state.chatRequests.at(-1)!,
    calls: () => fireworks.state.chatRequests.length,
    refused: [
      [{ logit_bias: { '1': 5 } }, 'logit_bias'],
      [{ prediction: { type: 'content', content: 'x' } }, 'prediction'],
    ],
  },
  {
    provider: 'together-ai',
    title: 'Together AI',
    target: () => ({ gw, model: TOGETHER_MODEL, headers: { 'x-gateway-provider': 'together-ai' }, apiKey: TOGETHER_KEY }),
    received: () => together.state.chatRequests.at(-1)!,
    calls: () => together.state.chatRequests.length,
    refused: [
      [{ logprobs: true }, 'logprobs'],
      [{ metadata: { a: 'b' } }, 'metadata'],
    ],
  },
];

describe.each(PROVIDERS)('$title', (p) => {
  chatContract(p.title, {
    ...p,
    answers: { sent: ANSWER_REQUEST, streamed: { stream: true, stream_options: { include_usage: true } } },
    sdk: true,
    several: true,
    images: { urls: true, sent: (_png, content) => expect(p.received().messages).toEqual([{ role: 'user', content }]) },
  });
  const client = () => chatClient(p.target());
  const model = () => p.target().model;

  it('relays a tool round trip with the body as sent, the model replaced', async () => {
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Paris' }];
    const first = await client().chat.completions.create({ model: model(), messages, tools: [WEATHER], tool_choice: 'auto' });
    expect(p.received()).toMatchObject({ messages, tools: [WEATHER], tool_choice: 'auto' });
    const { message } = first.choices[0];
    const call = message.tool_calls![0];
    messages.push(message, { role: 'tool', tool_call_id: call.id, content: 'Sunny' });
    await client().chat.completions.create({ model: model(), messages, tools: [WEATHER] });
    expect(p.received().messages.slice(1)).toEqual([
      { role: 'assistant', content: null, refusal: null, tool_calls: [call] },
      { role: 'tool', tool_call_id: call.id, content: 'Sunny' },
    ]);
  });

  it('answers a refusal as OpenAI does', async () => {
    const refused = await client().chat.completions.create({ model: model(), messages: [{ role: 'user', content: 'REFUSE this' }] });
    expect(refused.choices[0].message).toMatchObject({ content: null, refusal: "I'm sorry, I can't help with that." });
  });

  it('expands partials in text content only, never in tool arguments or schemas', async () => {
    const schema = { type: 'object', description: '{{>tone}}', properties: { note: { type: 'string' } }, required: ['note'], additionalProperties: false };
    await client().chat.completions.create({
      model: model(),
      messages: [
        { role: 'system', content: [{ type: 'text', text: '{{>tone}}' }] },
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'note', arguments: '{"note":"{{>tone}}"}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: 'noted {{>tone}}' },
      ],
      response_format: { type: 'json_schema', json_schema: { name: 'note', schema, strict: true } },
    });
    const body = p.received();
    expect(body.messages[0].content).toEqual([{ type: 'text', text: 'Be kind.' }]);
    expect(body.messages[2].tool_calls[0].function.arguments).toBe('{"note":"{{>tone}}"}');
    expect(body.messages[3].content).toBe('noted Be kind.');
    expect(body.response_format.json_schema.schema).toEqual(schema);
  });
});

describe('fields by provider', () => {
  const [openaiP, azureP] = PROVIDERS;

  it('passes fields it does not know on to OpenAI and Azure untouched', async () => {
    const extra = { prediction: { type: 'content', content: 'Hi' }, verbosity: 'low', safety_identifier: 'u-1' };
    for (const p of [openaiP, azureP]) {
      const res = await askChat(p.target(), {
        ...extra,
        metadata: { Team: 'a' },
        store: true,
        service_tier: 'flex',
        reasoning_effort: 'low',
        logit_bias: { '50256': -100 },
      });
      expect(res.status).toBe(200);
      expect(p.received()).toMatchObject({ ...extra, metadata: { Team: 'a' }, store: true, service_tier: 'flex', reasoning_effort: 'low' });
    }
  });

  it('answers log probabilities where the provider gives them, streamed too, and usage details', async () => {
    const client = chatClient(openaiP.target());
    const messages = [{ role: 'user' as const, content: 'Two words' }];
    const completion = await client.chat.completions.create({ model: 'gpt-4o-mini', messages, logprobs: true, top_logprobs: 2 });
    expect(completion.usage).toMatchObject({ prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0 } });
    const { chunks } = await streamedText(await client.chat.completions.create({ model: 'gpt-4o-mini', messages, logprobs: true, stream: true }));
    const tokens = chunks.flatMap((c) => c.choices[0]?.logprobs?.content ?? []);
    expect(tokens.map((t) => t.token).join('')).toBe(`Answer from gpt-4o-mini: Two words`);
  });

  it('validates known fields in the error shape', async () => {
    const bad = await askChat(openaiP.target(), { tool_choice: { type: 'function', function: { name: 'nope' } }, tools: [WEATHER] });
    expect(bad.body.error).toMatchObject({ type: 'invalid_request_error', param: 'tool_choice.function.name' });
    const image = await askChat(openaiP.target(), { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'x', detail: 'huge' } }] }] });
    expect(image.body.error).toMatchObject({ param: 'messages.0.content.0.image_url.detail' });
  });
});
