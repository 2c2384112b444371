/**
 * Chat with the model of a succeeded hosted job on Vertex AI, through the gateway's route with the
 * OpenAI SDK: the call goes to the tuned model's endpoint (no deployment to name) with a token of
 * the integration's service account, streamed or not; Vertex's 429 comes back as 429; a client
 * dropping the stream ends the upstream call.
 */
import { toFile } from 'openai';
import { startFakeVertex, type FakeVertex } from '../fakes/vertex-server';
import { dataset, eventually, sdk } from '../fine-tuning/harness';
import { BUCKET, fakeEndpoints } from '../providers/vertex-ai.support';
import { gatewayFetch } from '../support/answers';
import { api, startTestGateway, type TestGateway } from '../support/gateway';
import { expectLedgered } from '../usage/harness';
import { sseData, streamedText } from './harness';

let fake: FakeVertex;
let gw: TestGateway;
let client: ReturnType<typeof sdk>;
let model: string;

beforeAll(async () => {
  fake = await startFakeVertex();
  gw = await startTestGateway({ ...fakeEndpoints(fake), GATEWAY_JOB_POLL_MS: '50' });
  client = sdk(gw);
  const res = await api(gw, 'POST', '/v1/integrations', {
    body: {
      slug: 'my-vertex',
      provider: 'vertex-ai',
      credentials: { service_account_json: JSON.stringify(fake.serviceAccount) },
      options: { 'x-gateway-vertex-project-id': fake.projectId, 'x-gateway-vertex-region': fake.location, 'x-gateway-vertex-storage-bucket-name': BUCKET },
    },
  });
  expect(res.status).toBe(200);
  const file = await client.files.create({ file: await toFile(Buffer.from(dataset()), 'train.jsonl'), purpose: 'fine-tune' });
  const created = await client.fineTuning.jobs.create({
    model: 'gemini-2.0-flash-001',
    training_file: file.id,
    gateway_options: { 'x-gateway-provider': '@my-vertex' },
  } as never);
  const done = await eventually(async () => {
    const job = await client.fineTuning.jobs.retrieve(created.id);
    return job.status === 'succeeded' || job.status === 'failed' ? job : undefined;
  }, 30_000);
  expect(done.status).toBe('succeeded');
  model = done.fine_tuned_model!;
});

afterAll(async () => {
  await gw.stop();
  await fake.close();
});

const lastCall = () => fake.state.generateRequests.at(-1)!;

it('answers from the tuned model’s endpoint, streamed and not, and lists the model', async () => {
  const completion = await client.chat.completions.create({
    model,
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hi Gemini' },
    ],
  });
  expect(completion.model).toBe(model);
  expect(completion.choices[0].message.content).toMatch(/^Answer from projects\/[^/]+\/locations\/[^/]+\/endpoints\/[^:]+: Hi Gemini$/);
  expect(completion.usage?.total_tokens).toBeGreaterThan(0);
  expect(lastCall()).toMatchObject({ target: expect.stringMatching(/^endpoints\//), method: 'generateContent' });
  expect(lastCall().body).toMatchObject({
    systemInstruction: { parts: [{ text: 'Be brief.' }] },
    contents: [{ role: 'user', parts: [{ text: 'Hi Gemini' }] }],
  });
  expect(lastCall().accessToken).toBeTruthy();

  const stream = await client.chat.completions.create({
    model,
    messages: [{ role: 'user', content: 'Stream it' }],
    stream: true,
    stream_options: { include_usage: true },
  });
  const { text, chunks } = await streamedText(stream);
  expect(text).toMatch(/endpoints\/[^:]+: Stream it$/);
  expect(lastCall()).toMatchObject({ method: 'streamGenerateContent', alt: 'sse' });
  expect(chunks.at(-1)?.usage?.total_tokens).toBeGreaterThan(0);
  // The usage ledger holds both calls with the tokens Vertex reported.
  await expectLedgered(gw, 'vertex-ai', [
    { streamed: false, usage: completion.usage },
    { streamed: true, usage: chunks.at(-1)?.usage },
  ]);

  expect((await client.models.list()).data.map((m) => m.id)).toContain(model);
});

it('relays Vertex’s 429 as 429 provider_error', async () => {
  fake.failNext('POST', '/v1/projects', 429);
  const res = await api(gw, 'POST', '/v1/chat/completions', { body: { model, messages: [{ role: 'user', content: 'Hi' }] } });
  expect(res.status).toBe(429);
  expect(res.body.error).toMatchObject({ type: 'provider_error' });
});

it('ends the upstream stream when the client drops it', async () => {
  fake.settings.streamDelayMs = 100;
  try {
    const before = fake.state.abortedStreams;
    const cancel = new AbortController();
    const res = await gatewayFetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-api-key': gw.key },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'many words to stream slowly here' }], stream: true }),
      signal: cancel.signal,
    });
    await res.body!.getReader().read();
    cancel.abort();
    await eventually(async () => (fake.state.abortedStreams > before ? true : undefined), 5_000);
  } finally {
    fake.settings.streamDelayMs = 0;
  }
});

it('streams a plain SSE answer ending with [DONE]', async () => {
  const res = await gatewayFetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gateway-api-key': gw.key },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'Done?' }], stream: true }),
  });
  const events = await sseData(res);
  expect(events.at(-1)).toBe('[DONE]');
  expect(JSON.parse(events[0])).toMatchObject({ object: 'chat.completion.chunk', model, choices: [{ delta: { role: 'assistant' } }] });
});
