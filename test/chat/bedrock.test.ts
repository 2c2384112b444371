/**
 * Chat on Amazon Bedrock in client mode (the OpenAI SDK, AWS settings in headers) against the fake
 * runtime's Converse and ConverseStream: the chat contract (support/chat-kit.ts), and what is
 * Bedrock's own: a custom model answering through the deployment named in
 * x-gateway-aws-bedrock-model (without one, Bedrock's refusal relayed; a hosted job's model asking
 * for one is in fine-tuning/bedrock-hosted), turns merged, tools as `toolConfig` / `toolUse` / `toolResult`, `data:` images as bytes,
 * json_schema through a forced tool, a cut answer as `length`.
 */
import { startFakeBedrock, type FakeBedrock } from '../fakes/bedrock-server';
import { awsHeaders, fakeEndpoints } from '../providers/bedrock-harness';
import { askChat, chatClient, chatContract, imageAt, type ChatTarget } from '../support/chat-kit';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { streamedText } from './harness';
import { WEATHER } from './sdk-suite';

const MODEL = 'amazon.nova-lite-v1:0';
const CUSTOM_MODEL = 'arn:aws:bedrock:us-east-1:123456789012:custom-model/amazon.nova-micro-v1:0:128k/abcdefghijkl';

let fake: FakeBedrock;
let gw: TestGateway;

beforeAll(async () => {
  fake = await startFakeBedrock();
  gw = await startTestGateway({ ...fakeEndpoints(fake), GATEWAY_PROVIDER_TIMEOUT_MS: '5000' });
});

afterAll(async () => {
  await gw.stop();
  await fake.close();
});

const target = (model = MODEL, extra: Record<string, string> = {}): ChatTarget => ({
  gw,
  model,
  headers: { 'x-gateway-provider': 'bedrock', ...awsHeaders(fake), ...extra },
});
const lastCall = () => fake.state.converseCalls.at(-1)!;

chatContract('Amazon Bedrock', {
  provider: 'bedrock',
  title: 'Amazon Bedrock',
  target,
  received: lastCall,
  calls: () => fake.state.converseCalls.length,
  answers: {
    sent: {
      modelId: MODEL,
      stream: false,
      body: {
        system: [{ text: 'Be brief.' }],
        messages: [{ role: 'user', content: [{ text: 'Hello' }] }],
        inferenceConfig: { maxTokens: 50, temperature: 0.2, topP: 0.9, stopSequences: ['END'] },
      },
    },
    streamed: { modelId: MODEL, stream: true },
  },
  sdk: true,
  images: {
    sent: (png) =>
      expect(lastCall().body.messages).toEqual([{ role: 'user', content: [{ text: 'What is this? ' }, { image: { format: 'png', source: { bytes: png } } }] }]),
  },
  refused: [
    [{ seed: 1 }, 'seed'],
    [{ n: 2 }, 'n'],
    [{ logprobs: true }, 'logprobs'],
    [{ logit_bias: { '1': 1 } }, 'logit_bias'],
    [{ presence_penalty: 0.5 }, 'presence_penalty'],
    [{ parallel_tool_calls: false, tools: [WEATHER] }, 'parallel_tool_calls'],
    [{ metadata: { a: 'b' } }, 'metadata'],
    [{ user: 'u-1' }, 'user'],
    [{ prediction: { type: 'content', content: 'x' } }, 'prediction'],
    [{ tools: [WEATHER], response_format: { type: 'json_object' } }, 'response_format'],
    [imageAt('https://example.com/cat.png'), 'messages.0.content.0.image_url.url', { message: /Amazon Bedrock.*data: URL/ }],
    [imageAt('data:image/tiff;base64,AAAA'), 'messages.0.content.0.image_url.url', { code: 'invalid_request' }],
  ],
  // The SDK retries throttling (the gateway's policy: 2 more attempts); every attempt is throttled here.
  throttled: { inject: () => fake.runtime.failNext('POST', '/model/', 429, { times: 3 }), error: { code: 'ThrottlingException' } },
});

it('answers a custom model through the deployment in x-gateway-aws-bedrock-model, turns merged, streamed and not', async () => {
  const deployment = fake.registerDeployment(CUSTOM_MODEL);
  const sdk = chatClient(target(CUSTOM_MODEL, { 'x-gateway-aws-bedrock-model': deployment }));
  const messages = [{ role: 'system' as const, content: 'Be brief.' }, ...['Hello', 'there'].map((content) => ({ role: 'user' as const, content }))];
  const completion = await sdk.chat.completions.create({ model: CUSTOM_MODEL, messages });
  expect(completion).toMatchObject({
    id: expect.stringMatching(/^chatcmpl-/),
    model: CUSTOM_MODEL,
    choices: [{ message: { content: `Answer from ${deployment}: Hellothere` } }],
  });
  expect(lastCall()).toEqual({
    modelId: deployment,
    stream: false,
    body: { system: [{ text: 'Be brief.' }], messages: [{ role: 'user', content: [{ text: 'Hello' }, { text: 'there' }] }] },
  });
  expect(fake.state.sigv4.runtime.failures).toEqual([]);
  const stream = await sdk.chat.completions.create({ model: CUSTOM_MODEL, messages: [{ role: 'user', content: 'Stream Bedrock' }], stream: true });
  const { text, chunks } = await streamedText(stream);
  expect(text).toBe(`Answer from ${deployment}: Stream Bedrock`);
  expect(chunks[0].id).toMatch(/^chatcmpl-/);
  expect(lastCall()).toMatchObject({ modelId: deployment, stream: true });
});

it('passes a custom model without a deployment on to Bedrock and relays its refusal (client mode does not second-guess)', async () => {
  const res = await askChat(target(CUSTOM_MODEL));
  expect(res.status).toBe(400);
  expect(res.body.error).toMatchObject({
    type: 'provider_error',
    code: 'ValidationException',
    message: expect.stringMatching(/^Amazon Bedrock: Invocation of a custom model on demand is not supported\. Create a custom model deployment/),
  });
  expect(lastCall()).toMatchObject({ modelId: CUSTOM_MODEL });
});

const ask = (text: string) => [{ role: 'user' as const, content: text }];
const toolUse = (i: number, city: string) => ({ toolUse: { toolUseId: `call_${i}`, name: 'get_weather', input: { city } } });
const toolResult = (i: number, text: string) => ({ toolResult: { toolUseId: `call_${i}`, content: [{ text }] } });
const calls = ['Paris', 'Rome'].map((city, i) => ({
  id: `call_${i}`,
  type: 'function' as const,
  function: { name: 'get_weather', arguments: `{"city":"${city}"}` },
}));
const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] };
const forced = { name: 'reply', description: 'Answer with JSON that matches this schema.', inputSchema: { json: schema } };
const spec = { description: 'The weather in a city', inputSchema: { json: WEATHER.function.parameters } };
const getTime = { ...WEATHER, function: { ...WEATHER.function, name: 'get_time', strict: undefined } };

it.each<[string, Record<string, unknown>, Record<string, unknown>, Record<string, unknown>]>([
  [
    'an answer cut by max_tokens as length',
    { model: 'amazon.nova-micro-v1:0', messages: ask('Hello'), max_tokens: 2 },
    { inferenceConfig: { maxTokens: 2 } },
    { choices: [{ message: { content: 'Answer from ' }, finish_reason: 'length' }], usage: { completion_tokens: 2 } },
  ],
  [
    'tools as toolConfig, assistant calls as toolUse and tool messages as toolResult blocks of one user turn',
    {
      messages: [
        ...ask('Paris and Rome'),
        { role: 'assistant', content: null, tool_calls: calls },
        { role: 'tool', tool_call_id: 'call_0', content: 'Sunny' },
        { role: 'tool', tool_call_id: 'call_1', content: 'Rainy' },
      ],
      tools: [WEATHER, getTime],
      tool_choice: 'required',
    },
    {
      messages: [
        { role: 'user', content: [{ text: 'Paris and Rome' }] },
        { role: 'assistant', content: [toolUse(0, 'Paris'), toolUse(1, 'Rome')] },
        { role: 'user', content: [toolResult(0, 'Sunny'), toolResult(1, 'Rainy')] },
      ],
      toolConfig: {
        tools: [{ toolSpec: { ...spec, name: 'get_weather', strict: true } }, { toolSpec: { ...spec, name: 'get_time' } }],
        toolChoice: { any: {} },
      },
    },
    {},
  ],
  ['no toolConfig for tool_choice none', { messages: ask('Hi'), tools: [WEATHER], tool_choice: 'none' }, {}, {}],
  [
    'json_schema through a forced tool whose input schema is the schema',
    { messages: ask('Hi'), response_format: { type: 'json_schema', json_schema: { name: 'reply', schema } } },
    { toolConfig: { tools: [{ toolSpec: forced }], toolChoice: { tool: { name: 'reply' } } } },
    { choices: [{ finish_reason: 'stop', message: { content: JSON.stringify({ answer: 'Hi' }) } }] },
  ],
])('sends and answers %s', async (_what, request, { toolConfig, ...sent }, answer) => {
  const model = (request.model as string | undefined) ?? MODEL;
  const completion = await chatClient(target(model)).chat.completions.create({ model, ...request } as never);
  expect(lastCall().body).toMatchObject(sent);
  expect(lastCall().body.toolConfig).toEqual(toolConfig); // whole, or absent
  expect(completion).toMatchObject(answer);
  if (!request.tools) expect(completion.choices[0].message.tool_calls).toBeUndefined();
});
