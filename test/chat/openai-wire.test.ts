/**
 * OpenAI's whole chat request through the gateway with the official SDK, on the four providers whose
 * wire is OpenAI's (OpenAI, Azure OpenAI, Fireworks AI, Together AI; fakes, client mode): a tool round
 * trip streamed and not, `runTools`, structured outputs with `chat.completions.parse`, images, several
 * choices, log probabilities, refusals; the body relayed with only `model` replaced (fields the gateway
 * does not know too, for OpenAI and Azure); what a provider cannot carry refused naming field and
 * provider; partials expanded in text only. gatewayFetch validates every answer and chunk against
 * OpenAI's published schema.
 */
import type OpenAI from 'openai';
import { zodResponseFormat } from 'openai/helpers/zod';
import { z } from 'zod/v4';
import { AZURE_TEST_API_KEY, startFakeAzureOpenAI, type FakeAzureOpenAI } from '../fakes/azure-openai-server';
import { startFakeFireworks, type FakeFireworks } from '../fakes/fireworks-server';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { startFakeTogether, type FakeTogether } from '../fakes/together-server';
import { gatewaySdk } from '../support/answers';
import { api, startTestGateway, type TestGateway } from '../support/gateway';
import { streamedText } from './harness';

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

const WEATHER: OpenAI.Chat.Completions.ChatCompletionTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'The weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
    strict: true,
  },
};

const Weather = z.object({ city: z.string(), temperature: z.number(), sunny: z.boolean() });

describe.each(PROVIDERS)('$title', (p) => {
  it('runs a tool round trip: the model calls the tool, the caller answers, the model answers in text', async () => {
    const client = sdkFor(p);
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Paris' }];
    const first = await client.chat.completions.create({ model: p.model, messages, tools: [WEATHER], tool_choice: 'auto' });
    expect(first.model).toBe(p.model);
    const [choice] = first.choices;
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.content).toBeNull();
    expect(choice.message.tool_calls).toEqual([
      { id: expect.stringMatching(/^call_/), type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
    ]);
    // The body reached the provider as sent, with the provider's model.
    expect(p.lastBody()).toMatchObject({ messages, tools: [WEATHER], tool_choice: 'auto' });

    const call = choice.message.tool_calls![0];
    messages.push(choice.message, { role: 'tool', tool_call_id: call.id, content: 'Sunny, 21 °C' });
    const second = await client.chat.completions.create({ model: p.model, messages, tools: [WEATHER] });
    expect(second.choices[0]).toMatchObject({ finish_reason: 'stop', message: { role: 'assistant', content: `Answer from ${p.answeredBy}: Sunny, 21 °C` } });
    expect(p.lastBody().messages[1]).toEqual({ role: 'assistant', content: null, refusal: null, tool_calls: [call] });
  });

  it('streams a tool call in OpenAI’s chunk shape, which the SDK’s stream helper assembles', async () => {
    const client = sdkFor(p);
    const stream = await client.chat.completions.create({
      model: p.model,
      messages: [{ role: 'user', content: 'Rome' }],
      tools: [WEATHER],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      stream: true,
      stream_options: { include_usage: true },
    });
    const { chunks } = await streamedText(stream);
    const deltas = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(deltas[0]).toEqual({ index: 0, id: expect.stringMatching(/^call_/), type: 'function', function: { name: 'get_weather', arguments: '' } });
    expect(deltas.slice(1).every((d) => d.index === 0 && d.id === undefined && d.function?.name === undefined)).toBe(true);
    expect(deltas.map((d) => d.function?.arguments ?? '').join('')).toBe('{"city":"Rome"}');
    expect(chunks.find((c) => c.choices[0]?.finish_reason)?.choices[0].finish_reason).toBe('tool_calls');
    expect(chunks.at(-1)?.usage?.total_tokens).toBeGreaterThan(0);

    const helper = client.chat.completions.stream({ model: p.model, messages: [{ role: 'user', content: 'Oslo' }], tools: [WEATHER] });
    const final = await helper.finalChatCompletion();
    expect(final.choices[0].message.tool_calls?.[0].function).toMatchObject({ name: 'get_weather', arguments: '{"city":"Oslo"}' });
  });

  it.each([false, true])('runs the SDK’s runTools loop to a final answer (stream: %s)', async (stream) => {
    const client = sdkFor(p);
    const called: string[] = [];
    const tools = [
      {
        type: 'function' as const,
        function: {
          name: 'get_weather',
          description: 'The weather in a city',
          parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
          parse: (args: string) => JSON.parse(args) as { city: string },
          function: ({ city }: { city: string }) => {
            called.push(city);
            return `Cloudy in ${city}`;
          },
        },
      },
    ];
    const messages = [{ role: 'user' as const, content: 'Lima' }];
    const runner = stream
      ? client.chat.completions.runTools({ model: p.model, messages, tools, stream: true })
      : client.chat.completions.runTools({ model: p.model, messages, tools });
    expect(await runner.finalContent()).toBe(`Answer from ${p.answeredBy}: Cloudy in Lima`);
    expect(called).toEqual(['Lima']);
  });

  it('answers structured outputs that chat.completions.parse parses with the zod schema', async () => {
    const client = sdkFor(p);
    const completion = await client.chat.completions.parse({
      model: p.model,
      messages: [{ role: 'user', content: 'Weather in Nice?' }],
      response_format: zodResponseFormat(Weather, 'weather'),
    });
    expect(completion.choices[0].message.parsed).toEqual({ city: `Answer from ${p.answeredBy}: Weather in Nice?`, temperature: 1, sunny: true });
    expect(p.lastBody().response_format).toMatchObject({ type: 'json_schema', json_schema: { name: 'weather', strict: true } });

    const json = await client.chat.completions.create({
      model: p.model,
      messages: [{ role: 'user', content: 'Answer in JSON' }],
      response_format: { type: 'json_object' },
      stream: true,
    });
    const { text } = await streamedText(json);
    expect(JSON.parse(text)).toEqual({ answer: `Answer from ${p.answeredBy}: Answer in JSON` });
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
