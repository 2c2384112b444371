/**
 * OpenAI's whole request on Amazon Bedrock (client mode, the OpenAI SDK, the fake runtime speaking
 * Converse): the SDK suite (tools, runTools, structured outputs through the forced tool), tools and
 * tool results as Converse's `toolConfig`, `toolUse` and `toolResult`, `data:` images as bytes, and
 * what Converse cannot carry refused naming the field and Amazon Bedrock.
 */
import { startFakeBedrock, type FakeBedrock } from '../fakes/bedrock-server';
import { awsHeaders, fakeEndpoints } from '../providers/bedrock-harness';
import { gatewaySdk } from '../support/answers';
import { api, startTestGateway, type TestGateway } from '../support/gateway';
import { sdkSuite, WEATHER } from './sdk-suite';

const MODEL = 'amazon.nova-lite-v1:0';

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

const headers = () => ({ 'x-gateway-provider': 'bedrock', ...awsHeaders(fake) });
const client = () => gatewaySdk(gw, { headers: headers() });
const lastCall = () => fake.state.converseCalls.at(-1)!;

describe('the SDK on Amazon Bedrock', () => {
  sdkSuite(() => ({ model: MODEL, answeredBy: MODEL, client }));
});

it('sends tools as toolConfig, assistant calls as toolUse and tool messages as toolResult blocks of one user turn', async () => {
  const other = { ...WEATHER, function: { ...WEATHER.function, name: 'get_time', strict: undefined } };
  await client().chat.completions.create({
    model: MODEL,
    messages: [
      { role: 'user', content: 'Paris and Rome' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'call_b', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_a', content: 'Sunny' },
      { role: 'tool', tool_call_id: 'call_b', content: 'Rainy' },
    ],
    tools: [WEATHER, other],
    tool_choice: 'required',
  });
  expect(lastCall().body).toMatchObject({
    messages: [
      { role: 'user', content: [{ text: 'Paris and Rome' }] },
      {
        role: 'assistant',
        content: [
          { toolUse: { toolUseId: 'call_a', name: 'get_weather', input: { city: 'Paris' } } },
          { toolUse: { toolUseId: 'call_b', name: 'get_weather', input: { city: 'Rome' } } },
        ],
      },
      {
        role: 'user',
        content: [{ toolResult: { toolUseId: 'call_a', content: [{ text: 'Sunny' }] } }, { toolResult: { toolUseId: 'call_b', content: [{ text: 'Rainy' }] } }],
      },
    ],
    toolConfig: {
      tools: [
        { toolSpec: { name: 'get_weather', description: 'The weather in a city', inputSchema: { json: WEATHER.function.parameters }, strict: true } },
        { toolSpec: { name: 'get_time', inputSchema: { json: WEATHER.function.parameters } } },
      ],
      toolChoice: { any: {} },
    },
  });
  await client().chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Hi' }], tools: [WEATHER], tool_choice: 'none' });
  expect(lastCall().body.toolConfig).toBeUndefined();
});

it('sends a data: image as bytes, and refuses an image URL naming the part', async () => {
  const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
  const completion = await client().chat.completions.create({
    model: MODEL,
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is this? ' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${png.toString('base64')}` } },
        ],
      },
    ],
  });
  expect(completion.choices[0].message.content).toBe(`Answer from ${MODEL}: What is this? [image image/png 16 bytes]`);
  expect(lastCall().body.messages).toEqual([
    { role: 'user', content: [{ text: 'What is this? ' }, { image: { format: 'png', source: { bytes: png.toString('base64') } } }] },
  ]);

  const before = fake.state.converseCalls.length;
  const url = await ask({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }] }] });
  expect(url.status).toBe(400);
  expect(url.body.error).toMatchObject({ code: 'unsupported_parameter', param: 'messages.0.content.0.image_url.url' });
  expect(url.body.error.message).toMatch(/Amazon Bedrock.*data: URL/);
  const tiff = await ask({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/tiff;base64,AAAA' } }] }] });
  expect(tiff.body.error).toMatchObject({ param: 'messages.0.content.0.image_url.url' });
  expect(fake.state.converseCalls.length).toBe(before);
});

const ask = (body: Record<string, unknown>) =>
  api(gw, 'POST', '/v1/chat/completions', { headers: headers(), body: { model: MODEL, messages: [{ role: 'user', content: 'Hi' }], ...body } });

it.each([
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
])('refuses %j naming the field and Amazon Bedrock, before any call', async (body, param) => {
  const before = fake.state.converseCalls.length;
  const res = await ask(body);
  expect(res.status).toBe(400);
  expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'unsupported_parameter', param });
  expect(res.body.error.message).toContain('Amazon Bedrock');
  expect(fake.state.converseCalls.length).toBe(before);
});

it('answers json_schema through a forced tool whose input schema is the schema', async () => {
  const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] };
  const completion = await client().chat.completions.create({
    model: MODEL,
    messages: [{ role: 'user', content: 'Hi' }],
    response_format: { type: 'json_schema', json_schema: { name: 'reply', schema } },
  });
  expect(completion.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: JSON.stringify({ answer: 'Hi' }) } });
  expect(completion.choices[0].message.tool_calls).toBeUndefined();
  expect(lastCall().body.toolConfig).toEqual({
    tools: [{ toolSpec: { name: 'reply', description: 'Answer with JSON that matches this schema.', inputSchema: { json: schema } } }],
    toolChoice: { tool: { name: 'reply' } },
  });
});
