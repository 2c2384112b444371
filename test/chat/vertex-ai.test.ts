/**
 * Chat on Vertex AI against the fake speaking generateContent, with the OpenAI SDK: the chat contract
 * (support/chat-kit.ts) in client mode through a stored integration and in hosted mode on the tuned
 * model of a succeeded job (its endpoint, no deployment to name), and what is Vertex's own: tools as
 * `functionDeclarations` with their schema converted, tool messages as `functionResponse` parts,
 * `data:` images as `inlineData`, options in `generationConfig`, a stream's error scrubbed of the
 * token Vertex echoes, models that are no Vertex reference refused, an endpoint serving nothing.
 */
import { startFakeVertex, type FakeVertex } from '../fakes/vertex-server';
import { BUCKET, fakeEndpoints } from '../providers/vertex-ai.support';
import { gatewaySdk } from '../support/answers';
import { askChat, chatClient, chatContract, imageAt, type ChatTarget } from '../support/chat-kit';
import { api, startTestGateway, type TestGateway } from '../support/gateway';
import { succeededJob } from './harness';
import { WEATHER } from './sdk-suite';

const MODEL = 'gemini-2.5-flash';

let fake: FakeVertex;
let gw: TestGateway;
let hosted: ChatTarget;

beforeAll(async () => {
  fake = await startFakeVertex();
  gw = await startTestGateway({ ...fakeEndpoints(fake), GATEWAY_JOB_POLL_MS: '50' });
  const res = await api(gw, 'POST', '/v1/integrations', {
    body: {
      slug: 'my-vertex',
      provider: 'vertex-ai',
      credentials: { service_account_json: JSON.stringify(fake.serviceAccount) },
      options: { 'x-gateway-vertex-project-id': fake.projectId, 'x-gateway-vertex-region': fake.location, 'x-gateway-vertex-storage-bucket-name': BUCKET },
    },
  });
  expect(res.status).toBe(200);
  const { model } = await succeededJob(gatewaySdk(gw), '@my-vertex', { model: 'gemini-2.0-flash-001' });
  hosted = { gw, model, answeredBy: [...fake.state.tuningJobs.values()].at(-1)!.tunedModel!.endpoint };
});

afterAll(async () => {
  await gw.stop();
  await fake.close();
});

const client = (): ChatTarget => ({ gw, model: MODEL, headers: { 'x-gateway-provider': '@my-vertex' } });
const lastCall = () => fake.state.generateRequests.at(-1)!;
const lastBody = () => lastCall().body as Record<string, any>;
const calls = () => fake.state.generateRequests.length;
const sent = (target: unknown) => ({
  target,
  method: 'generateContent',
  accessToken: expect.stringMatching(/\S{10}/),
  body: {
    systemInstruction: { parts: [{ text: 'Be brief.' }] },
    contents: [{ role: 'user', parts: [{ text: 'Hello' }] }],
    generationConfig: { maxOutputTokens: 50, temperature: 0.2, topP: 0.9, stopSequences: ['END'] },
  },
});
const streamed = { method: 'streamGenerateContent', alt: 'sse' };

const vertex = {
  provider: 'vertex-ai',
  title: 'Vertex AI',
  received: lastCall,
  calls,
  dropped: { delay: (ms: number) => (fake.settings.streamDelayMs = ms), abandoned: () => fake.state.abortedStreams },
};

chatContract('Vertex AI, client mode (@slug)', {
  ...vertex,
  target: client,
  answers: { sent: sent(`publishers/google/models/${MODEL}`), streamed },
  sdk: true,
  several: true,
  logprobs: { sent: { body: { generationConfig: { responseLogprobs: true, logprobs: 2 } } } },
  images: {
    sent: (png) =>
      expect(lastBody().contents).toEqual([{ role: 'user', parts: [{ text: 'What is this? ' }, { inlineData: { mimeType: 'image/png', data: png } }] }]),
  },
  refused: [
    [imageAt('https://example.com/a.png'), 'messages.0.content.0.image_url.url'],
    [{ logit_bias: { '1': 1 } }, 'logit_bias'],
    [{ reasoning_effort: 'low' }, 'reasoning_effort'],
    [{ parallel_tool_calls: false, tools: [WEATHER] }, 'parallel_tool_calls'],
    [{ user: 'u-1' }, 'user'],
    [{ verbosity: 'low' }, 'verbosity'],
    // A schema keyword Vertex AI has no equivalent for.
    [
      {
        response_format: {
          type: 'json_schema',
          json_schema: { name: 'x', schema: { type: 'object', properties: { a: { $ref: '#/$defs/x' } }, $defs: { x: { type: 'string' } } } },
        },
      },
      'response_format.json_schema.schema.properties.a.$ref',
    ],
  ],
  failsMidway: {
    // Vertex echoes the request's access token in its error: the gateway scrubs it.
    inject: () => (fake.settings.nextStreamFailure = (token) => `Internal error while serving the request with token ${token}`),
    before: `Answer `,
    error: { message: 'Vertex AI: Internal error while serving the request with token [redacted]', type: 'provider_error', param: null, code: 'INTERNAL' },
  },
});

chatContract('Vertex AI, hosted: the tuned model of a succeeded job', {
  ...vertex,
  target: () => hosted,
  answers: { sent: sent(expect.stringMatching(/^endpoints\/\d+$/)), streamed: { ...streamed, target: expect.stringMatching(/^endpoints\/\d+$/) } },
  throttled: { inject: () => fake.failNext('POST', '/v1/projects', 429) },
});

it('lists the tuned model', async () => {
  expect((await chatClient(client()).models.list()).data.map((m) => m.id)).toContain(hosted.model);
});

it('sends tools as functionDeclarations, calls as functionCall and tool messages as functionResponse parts', async () => {
  const first = await chatClient(client()).chat.completions.create({
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

  await chatClient(client()).chat.completions.create({
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
});

it('sends assistant turns as model turns, JSON mode, several candidates and options in generationConfig', async () => {
  const completion = await chatClient(client()).chat.completions.create({
    model: MODEL,
    messages: [
      { role: 'user', content: 'What is 2+2?' },
      { role: 'assistant', content: '4' },
      { role: 'user', content: 'See' },
    ],
    n: 2,
    presence_penalty: 0.5,
    frequency_penalty: 0.25,
    seed: 7,
    response_format: { type: 'json_object' },
  });
  expect(completion.choices.map((c) => JSON.parse(c.message.content!))).toEqual([
    { answer: `Answer from ${MODEL}: See` },
    { answer: `Answer from ${MODEL}: See` },
  ]);
  expect(lastBody().contents).toEqual([
    { role: 'user', parts: [{ text: 'What is 2+2?' }] },
    { role: 'model', parts: [{ text: '4' }] },
    { role: 'user', parts: [{ text: 'See' }] },
  ]);
  expect(lastBody().generationConfig).toEqual({
    candidateCount: 2,
    presencePenalty: 0.5,
    frequencyPenalty: 0.25,
    seed: 7,
    responseMimeType: 'application/json',
  });
});

it("relays Vertex's refusal of an endpoint that serves nothing, streamed and not", async () => {
  const model = `projects/${fake.projectNumber}/locations/${fake.location}/endpoints/1234567890123456789`;
  for (const stream of [false, true])
    expect(await askChat(client(), { model, stream })).toMatchObject({ status: 404, body: { error: { type: 'provider_error', code: 'NOT_FOUND' } } });
});

// A tool message answering no call, a conversation without a user turn, models that are no Vertex reference.
it.each<[Parameters<typeof askChat>[1], string]>([
  [
    {
      messages: [
        { role: 'user', content: 'x' },
        { role: 'tool', tool_call_id: 'call_nope', content: 'y' },
      ],
      tools: [WEATHER],
    },
    'messages.1.tool_call_id',
  ],
  [{ messages: [{ role: 'system', content: 'x' }] }, 'messages'],
  ...['https://evil.example/x', '../tuningJobs/1', 'projects/p/locations/us-central1/endpoints/1/../../x', 'a b'].map(
    (model) => [{ model }, 'model'] as [{ model: string }, string],
  ),
])('refuses %j with a 400 naming %s, before any call', async (body, param) => {
  const before = fake.state.requests.length;
  expect(await askChat(client(), body)).toMatchObject({ status: 400, body: { error: { type: 'invalid_request_error', param } } });
  expect(fake.state.requests.length).toBe(before);
});
