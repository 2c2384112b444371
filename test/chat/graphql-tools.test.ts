/**
 * OpenAI's whole chat request through GraphQL `chatCompletion` (client mode, stored integrations):
 * a tool round trip (the model calls a tool → a TOOL message answers it → the final answer), a
 * JSON-schema answer with the schema's keys as the caller spelled them, an image part, and what a
 * provider cannot carry (an https image on Amazon Bedrock) refused as BAD_USER_INPUT naming field
 * and provider. The fakes speak each provider's wire.
 */
import { startFakeBedrock, type FakeBedrock } from '../fakes/bedrock-server';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { ChatCompletionDocument } from '../graphql/generated/operations';
import { bedrockIntegration, fakeEndpoints } from '../providers/bedrock-harness';
import { api, startTestGateway, type TestGateway } from '../support/gateway';
import { data, run } from '../support/graphql';

const OPENAI_KEY = 'sk-gql-tools-0123456789abcdef';
const MODEL = 'gpt-4o-mini';

let openai: FakeOpenAI;
let bedrock: FakeBedrock;
let gw: TestGateway;

beforeAll(async () => {
  [openai, bedrock] = await Promise.all([startFakeOpenAI({ apiKey: OPENAI_KEY }), startFakeBedrock()]);
  gw = await startTestGateway({ GATEWAY_OPENAI_BASE_URL: openai.url, ...fakeEndpoints(bedrock) });
  const integrations = [
    { slug: 'oai', provider: 'openai', credentials: { api_key: OPENAI_KEY }, options: {} },
    { slug: 'aws', provider: 'bedrock', ...bedrockIntegration(bedrock) },
  ];
  for (const body of integrations) expect((await api(gw, 'POST', '/v1/integrations', { body })).status).toBe(200);
});

afterAll(async () => {
  await gw.stop();
  await Promise.all([openai.close(), bedrock.close()]);
});

const lastBody = () => openai.state.chatRequests.at(-1)!.body as Record<string, any>;

const WEATHER = {
  function: {
    name: 'get_weather',
    description: 'The weather in a city',
    parameters: { type: 'object', properties: { cityName: { type: 'string' } }, required: ['cityName'], additionalProperties: false },
    strict: true,
  },
};

it('runs a tool round trip: the model calls the tool, a TOOL message answers, the model answers', async () => {
  const ask = { role: 'USER' as const, content: 'Weather in Paris?' };
  const first = await data(gw, ChatCompletionDocument, {
    input: { model: MODEL, integration: '@oai', messages: [ask], tools: [WEATHER], toolChoice: { mode: 'REQUIRED' as const }, parallelToolCalls: false },
  });
  expect(first.chatCompletion.finishReason).toBe('tool_calls');
  expect(first.chatCompletion.message).toMatchObject({ content: null, refusal: null });
  const [call] = first.chatCompletion.message.toolCalls!;
  expect(call).toEqual({ id: expect.any(String), type: 'function', function: { name: 'get_weather', arguments: expect.any(String) } });
  expect(JSON.parse(call.function.arguments)).toEqual({ cityName: expect.any(String) });
  // The tool's JSON Schema reached OpenAI with the caller's keys, the rest in OpenAI's spelling.
  expect(lastBody()).toMatchObject({ tools: [{ type: 'function', function: WEATHER.function }], tool_choice: 'required', parallel_tool_calls: false });

  const second = await data(gw, ChatCompletionDocument, {
    input: {
      model: MODEL,
      integration: '@oai',
      tools: [WEATHER],
      messages: [
        ask,
        { role: 'ASSISTANT' as const, toolCalls: [{ id: call.id, function: call.function }] },
        { role: 'TOOL' as const, toolCallId: call.id, content: 'Sunny, 21 °C' },
      ],
    },
  });
  expect(second.chatCompletion.message).toEqual({ role: 'assistant', content: `Answer from ${MODEL}: Sunny, 21 °C`, refusal: null, toolCalls: null });
  expect(second.chatCompletion.finishReason).toBe('stop');
  expect(lastBody().messages.slice(1)).toEqual([
    { role: 'assistant', tool_calls: [{ id: call.id, type: 'function', function: call.function }] },
    { role: 'tool', tool_call_id: call.id, content: 'Sunny, 21 °C' },
  ]);
});

it('forces a named tool with toolChoice.functionName, and refuses a choice setting both or neither', async () => {
  const input = { model: MODEL, integration: '@oai', messages: [{ role: 'USER' as const, content: 'Rome' }], tools: [WEATHER] };
  const named = await data(gw, ChatCompletionDocument, { input: { ...input, toolChoice: { functionName: 'get_weather' } } });
  expect(named.chatCompletion.message.toolCalls?.[0].function.name).toBe('get_weather');
  expect(lastBody().tool_choice).toEqual({ type: 'function', function: { name: 'get_weather' } });
  const both = await run(gw, ChatCompletionDocument, { input: { ...input, toolChoice: { mode: 'AUTO' as const, functionName: 'get_weather' } } });
  expect(both.body.errors?.[0]).toMatchObject({ extensions: { code: 'BAD_USER_INPUT' } });
  expect(both.body.errors?.[0].message).toMatch(/^toolChoice: /);
});

it('answers in a JSON schema, the schema passed with the caller’s keys', async () => {
  const schema = { type: 'object', properties: { cityName: { type: 'string' }, isSunny: { type: 'boolean' } }, required: ['cityName', 'isSunny'] };
  const { chatCompletion } = await data(gw, ChatCompletionDocument, {
    input: {
      model: MODEL,
      integration: '@oai',
      messages: [{ role: 'USER' as const, content: 'Paris weather as JSON' }],
      responseFormat: { type: 'JSON_SCHEMA' as const, jsonSchema: { name: 'weather_report', schema, strict: true } },
    },
  });
  expect(JSON.parse(chatCompletion.message.content!)).toEqual({ cityName: expect.any(String), isSunny: expect.any(Boolean) });
  expect(lastBody().response_format).toEqual({ type: 'json_schema', json_schema: { name: 'weather_report', schema, strict: true } });
});

it('sends an image part as OpenAI’s image_url part', async () => {
  const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
  const url = `data:image/png;base64,${png.toString('base64')}`;
  const { chatCompletion } = await data(gw, ChatCompletionDocument, {
    input: {
      model: MODEL,
      integration: '@oai',
      messages: [{ role: 'USER' as const, parts: [{ text: 'What is this? ' }, { imageUrl: { url, detail: 'LOW' as const } }] }],
    },
  });
  expect(chatCompletion.message.content).toBe(`Answer from ${MODEL}: What is this? [image image/png ${png.length} bytes]`);
  expect(lastBody().messages).toEqual([
    {
      role: 'user',
      content: [
        { type: 'text', text: 'What is this? ' },
        { type: 'image_url', image_url: { url, detail: 'low' } },
      ],
    },
  ]);
  const mixed = await run(gw, ChatCompletionDocument, {
    input: { model: MODEL, integration: '@oai', messages: [{ role: 'USER' as const, parts: [{ text: 'x', imageUrl: { url } }] }] },
  });
  expect(mixed.body.errors?.[0].message).toMatch(/^messages\.0\.parts\.0: must set exactly one of text and imageUrl/);
});

it('refuses what the provider cannot carry as BAD_USER_INPUT naming field and provider (an https image on Amazon Bedrock)', async () => {
  const before = bedrock.state.converseCalls.length;
  const res = await run(gw, ChatCompletionDocument, {
    input: {
      model: 'amazon.nova-lite-v1:0',
      integration: '@aws',
      messages: [{ role: 'USER' as const, parts: [{ imageUrl: { url: 'https://example.com/cat.png' } }] }],
    },
  });
  expect(res.body.errors?.[0]).toMatchObject({ extensions: { code: 'BAD_USER_INPUT' } });
  expect(res.body.errors?.[0].message).toMatch(/image_url\.url/);
  expect(res.body.errors?.[0].message).toMatch(/Amazon Bedrock/);
  expect(bedrock.state.converseCalls.length).toBe(before);
});
