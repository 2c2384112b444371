/**
 * OpenAI's whole request on Vertex AI (client mode through a stored integration, the OpenAI SDK, the
 * fake speaking generateContent): the SDK suite (tools with `call_…` ids the gateway makes, runTools,
 * structured outputs as `responseSchema`), tools as `functionDeclarations` with their schema
 * converted, tool messages as `functionResponse` parts, `data:` images as `inlineData`, several
 * candidates, log probabilities, and what Gemini cannot carry refused naming the field and Vertex AI.
 */
import { startFakeVertex, type FakeVertex } from '../fakes/vertex-server';
import { BUCKET, fakeEndpoints } from '../providers/vertex-ai.support';
import { gatewaySdk } from '../support/answers';
import { api, startTestGateway, type TestGateway } from '../support/gateway';
import { streamedText } from './harness';
import { sdkSuite, WEATHER } from './sdk-suite';

const MODEL = 'gemini-2.5-flash';
const HEADERS = { 'x-gateway-provider': '@vertex-tools' };

let fake: FakeVertex;
let gw: TestGateway;

beforeAll(async () => {
  fake = await startFakeVertex();
  gw = await startTestGateway(fakeEndpoints(fake));
  const res = await api(gw, 'POST', '/v1/integrations', {
    body: {
      slug: 'vertex-tools',
      provider: 'vertex-ai',
      credentials: { service_account_json: JSON.stringify(fake.serviceAccount) },
      options: { 'x-gateway-vertex-project-id': fake.projectId, 'x-gateway-vertex-region': fake.location, 'x-gateway-vertex-storage-bucket-name': BUCKET },
    },
  });
  expect(res.status).toBe(200);
});

afterAll(async () => {
  await gw.stop();
  await fake.close();
});

const client = () => gatewaySdk(gw, { headers: HEADERS });
const lastBody = () => fake.state.generateRequests.at(-1)!.body as Record<string, any>;
const ask = (body: Record<string, unknown>) =>
  api(gw, 'POST', '/v1/chat/completions', { headers: HEADERS, body: { model: MODEL, messages: [{ role: 'user', content: 'Hi' }], ...body } });

describe('the SDK on Vertex AI', () => {
  sdkSuite(() => ({ model: MODEL, answeredBy: MODEL, client }));
});

it('sends tools as functionDeclarations, calls as functionCall and tool messages as functionResponse parts', async () => {
  const first = await client().chat.completions.create({
    model: MODEL,
    messages: [{ role: 'user', content: 'Paris' }],
    tools: [WEATHER],
    tool_choice: 'required',
  });
  const call = first.choices[0].message.tool_calls![0];
  expect(call.id).toMatch(/^call_[\w-]{24}$/);
  expect(lastBody()).toMatchObject({
    tools: [
      {
        functionDeclarations: [
          {
            name: 'get_weather',
            description: 'The weather in a city',
            parameters: { type: 'OBJECT', properties: { city: { type: 'STRING' } }, required: ['city'], propertyOrdering: ['city'] },
          },
        ],
      },
    ],
    toolConfig: { functionCallingConfig: { mode: 'ANY' } },
  });
  expect(lastBody().tools[0].functionDeclarations[0].parameters.additionalProperties).toBeUndefined();

  await client().chat.completions.create({
    model: MODEL,
    messages: [{ role: 'user', content: 'Paris' }, first.choices[0].message, { role: 'tool', tool_call_id: call.id, content: 'Sunny' }],
    tools: [WEATHER],
    tool_choice: { type: 'function', function: { name: 'get_weather' } },
  });
  expect(lastBody().contents).toEqual([
    { role: 'user', parts: [{ text: 'Paris' }] },
    { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }] },
    { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { content: 'Sunny' } } }] },
  ]);
  expect(lastBody().toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] } });

  const unknown = await ask({
    messages: [
      { role: 'user', content: 'x' },
      { role: 'tool', tool_call_id: 'call_nope', content: 'y' },
    ],
    tools: [WEATHER],
  });
  expect(unknown.body.error).toMatchObject({ type: 'invalid_request_error', param: 'messages.1.tool_call_id' });
});

it('sends a data: image as inlineData, JSON mode and options in generationConfig', async () => {
  const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex').toString('base64');
  const completion = await client().chat.completions.create({
    model: MODEL,
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'See ' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } },
        ],
      },
    ],
    n: 2,
    presence_penalty: 0.5,
    frequency_penalty: 0.25,
    response_format: { type: 'json_object' },
  });
  expect(completion.choices.map((c) => JSON.parse(c.message.content!))).toEqual([
    { answer: `Answer from ${MODEL}: See [image image/png 16 bytes]` },
    { answer: `Answer from ${MODEL}: See [image image/png 16 bytes]` },
  ]);
  expect(lastBody().contents).toEqual([{ role: 'user', parts: [{ text: 'See ' }, { inlineData: { mimeType: 'image/png', data: png } }] }]);
  expect(lastBody().generationConfig).toEqual({ candidateCount: 2, presencePenalty: 0.5, frequencyPenalty: 0.25, responseMimeType: 'application/json' });
});

it('answers log probabilities and several candidates, streamed and not', async () => {
  const completion = await client().chat.completions.create({
    model: MODEL,
    messages: [{ role: 'user', content: 'Two words' }],
    logprobs: true,
    top_logprobs: 2,
  });
  const tokens = completion.choices[0].logprobs?.content ?? [];
  expect(tokens.map((t) => t.token).join('')).toBe(completion.choices[0].message.content);
  expect(tokens[0].top_logprobs).toHaveLength(2);
  expect(lastBody().generationConfig).toEqual({ responseLogprobs: true, logprobs: 2 });

  const stream = await client().chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Two words' }], n: 2, stream: true });
  const { chunks } = await streamedText(stream);
  const textOf = (index: number) =>
    chunks.flatMap((c) => c.choices.filter((choice) => choice.index === index).map((choice) => choice.delta.content ?? '')).join('');
  expect([textOf(0), textOf(1)]).toEqual([`Answer from ${MODEL}: Two words`, `Answer from ${MODEL}: Two words`]);
  expect(chunks.flatMap((c) => c.choices.filter((choice) => choice.finish_reason).map((choice) => choice.index))).toEqual([0, 1]);
});

it.each([
  [{ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }] }] }, 'messages.0.content.0.image_url.url'],
  [{ logit_bias: { '1': 1 } }, 'logit_bias'],
  [{ reasoning_effort: 'low' }, 'reasoning_effort'],
  [{ parallel_tool_calls: false, tools: [WEATHER] }, 'parallel_tool_calls'],
  [{ user: 'u-1' }, 'user'],
  [{ verbosity: 'low' }, 'verbosity'],
])('refuses %j naming the field and Vertex AI, before any call', async (body, param) => {
  const before = fake.state.generateRequests.length;
  const res = await ask(body);
  expect(res.status).toBe(400);
  expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'unsupported_parameter', param });
  expect(res.body.error.message).toContain('Vertex AI');
  expect(fake.state.generateRequests.length).toBe(before);
});

it('refuses a schema keyword Vertex AI has no equivalent for, naming it', async () => {
  const schema = { type: 'object', properties: { a: { $ref: '#/$defs/x' } }, $defs: { x: { type: 'string' } } };
  const res = await ask({ response_format: { type: 'json_schema', json_schema: { name: 'x', schema } } });
  expect(res.status).toBe(400);
  expect(res.body.error).toMatchObject({ code: 'unsupported_parameter', param: 'response_format.json_schema.schema.properties.a.$ref' });
});
