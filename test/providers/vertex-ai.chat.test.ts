/**
 * Chat through the Vertex AI adapter against the fake: OpenAI's request translated into Gemini's
 * generateContent (system instruction, user/model turns, generation config), the answer and its
 * usage back; streamed answers over SSE (the rest of streaming is the adapter contract's);
 * a tuned model answering on its endpoint; models that are no Vertex reference refused.
 */
import type { ChatBody } from '../../src/providers/chat-request';
import type { ChatAnswer, ChatChunk, ChatRequest } from '../../src/providers/types';
import { startFakeVertex, type FakeVertex } from '../fakes/vertex-server';
import { BUCKET, gatewayError, vertexClient } from './vertex-ai.support';

let fake: FakeVertex;

beforeAll(async () => {
  fake = await startFakeVertex();
});

afterAll(() => fake.close());

/** A request for `model` (default gemini-2.5-flash) with OpenAI's body fields overridden. */
const request = ({
  model = 'gemini-2.5-flash',
  signal = new AbortController().signal,
  ...body
}: Partial<ChatBody> & { signal?: AbortSignal } = {}): ChatRequest => ({
  model,
  hosted: false,
  signal,
  body: {
    model,
    messages: [
      { role: 'system', content: 'Answer briefly.' },
      { role: 'user', content: 'What is 2+2?' },
      { role: 'assistant', content: '4' },
      { role: 'user', content: 'And 3+3?' },
    ],
    ...body,
  },
});

function completion(answer: ChatAnswer) {
  if (answer.stream) throw new Error('expected a whole answer');
  return answer.completion;
}

async function collect(answer: ChatAnswer): Promise<ChatChunk[]> {
  if (!answer.stream) throw new Error('expected a stream');
  const chunks: ChatChunk[] = [];
  for await (const chunk of answer.chunks) chunks.push(chunk);
  return chunks;
}

/** A tuning job driven to success: its endpoint serves the tuned model. */
async function tunedEndpoint(): Promise<string> {
  fake.putObject(
    BUCKET,
    'gateway-files/chat.jsonl',
    JSON.stringify({
      contents: [
        { role: 'user', parts: [{ text: 'hi' }] },
        { role: 'model', parts: [{ text: 'ho' }] },
      ],
    }),
  );
  const vertex = vertexClient(fake);
  const job = await vertex.createJob({ model: 'gemini-2.0-flash-001', trainingFile: `gs://${BUCKET}/gateway-files/chat.jsonl`, options: {} });
  await vertex.getJob(job.id);
  const done = await vertex.getJob(job.id);
  if (!done.servingModel) throw new Error('the job did not succeed');
  return done.servingModel;
}

describe('Vertex AI chat', () => {
  it("translates OpenAI's request into generateContent and the answer back", async () => {
    const answer = completion(await vertexClient(fake).chat(request({ max_tokens: 50, temperature: 0.2, top_p: 0.9, stop: ['\n\n'], seed: 7 })));
    expect(answer).toEqual({
      id: expect.stringMatching(/^chatcmpl-/),
      model: 'gemini-2.5-flash',
      created: expect.any(Number),
      choices: [{ index: 0, content: 'Answer from gemini-2.5-flash: And 3+3?', refusal: null, toolCalls: [], finishReason: 'stop', logprobs: null }],
      usage: { promptTokens: expect.any(Number), completionTokens: expect.any(Number), totalTokens: expect.any(Number) },
    });
    expect(answer.usage!.totalTokens).toBe(answer.usage!.promptTokens + answer.usage!.completionTokens);
    const received = fake.state.generateRequests.at(-1)!;
    expect(received).toMatchObject({ target: 'publishers/google/models/gemini-2.5-flash', method: 'generateContent' });
    expect(received.body).toEqual({
      systemInstruction: { parts: [{ text: 'Answer briefly.' }] },
      contents: [
        { role: 'user', parts: [{ text: 'What is 2+2?' }] },
        { role: 'model', parts: [{ text: '4' }] },
        { role: 'user', parts: [{ text: 'And 3+3?' }] },
      ],
      generationConfig: { maxOutputTokens: 50, temperature: 0.2, topP: 0.9, stopSequences: ['\n\n'], seed: 7 },
    });
  });

  it("answers with a tuned model on its endpoint (the hosted job's serving model)", async () => {
    const endpoint = await tunedEndpoint();
    const answer = completion(await vertexClient(fake).chat(request({ model: endpoint })));
    expect(answer).toMatchObject({ model: endpoint, choices: [{ content: `Answer from ${endpoint}: And 3+3?` }] });
    expect(fake.state.generateRequests.at(-1)?.target).toBe(`endpoints/${endpoint.split('/').at(-1)}`);
  });

  it('streams with streamGenerateContent over server-sent events', async () => {
    const chunks = await collect(await vertexClient(fake).chat(request({ stream: true })));
    expect(chunks.filter((c) => c.type === 'delta').length).toBeGreaterThan(3);
    expect(fake.state.generateRequests.at(-1)).toMatchObject({ method: 'streamGenerateContent', alt: 'sse' });
  });

  it('ends a stream Vertex fails midway with its error, scrubbed of the access token it echoes', async () => {
    let echoed = '';
    fake.settings.nextStreamFailure = (token) => {
      echoed = token;
      return `Internal error while serving the request with token ${token}`;
    };
    const answer = await vertexClient(fake).chat(request({ stream: true }));
    const failure = await collect(answer).catch((err: unknown) => err);
    expect(echoed.length).toBeGreaterThan(10);
    expect(failure).toMatchObject({
      kind: 'provider',
      status: 502,
      code: 'INTERNAL',
      message: 'Vertex AI: Internal error while serving the request with token [redacted]',
    });
  });

  it("relays Vertex's refusal of an endpoint that serves nothing", async () => {
    const model = `projects/${fake.projectNumber}/locations/${fake.location}/endpoints/1234567890123456789`;
    expect(await gatewayError(vertexClient(fake).chat(request({ model })))).toMatchObject({ kind: 'provider', status: 404, code: 'NOT_FOUND' });
    expect(await gatewayError(vertexClient(fake).chat(request({ model, stream: true })))).toMatchObject({ kind: 'provider', status: 404 });
  });

  it.each(['https://evil.example/x', '../tuningJobs/1', 'projects/p/locations/us-central1/endpoints/1/../../x', 'a b'])(
    'refuses the model %j before any call',
    async (model) => {
      const before = fake.state.requests.length;
      expect(await gatewayError(vertexClient(fake).chat(request({ model })))).toMatchObject({ kind: 'invalid_request', status: 400, path: ['model'] });
      expect(fake.state.requests.length).toBe(before);
    },
  );

  it('refuses a tool message answering no call, and a conversation without a user turn', async () => {
    const tool = request({
      messages: [
        { role: 'user', content: 'x' },
        { role: 'tool', content: 'y', tool_call_id: 'call_1' },
      ],
    });
    expect(await gatewayError(vertexClient(fake).chat(tool))).toMatchObject({ status: 400, path: ['messages', 1, 'tool_call_id'] });
    const systemOnly = request({ messages: [{ role: 'system', content: 'x' }] });
    expect(await gatewayError(vertexClient(fake).chat(systemOnly))).toMatchObject({ status: 400, path: ['messages'] });
  });
});
