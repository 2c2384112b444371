/**
 * Chat with Bedrock through the registry's ProviderClient against the fake runtime: Converse and
 * ConverseStream with the deployment named in x-gateway-aws-bedrock-model, `deployment_required` for
 * a bare custom model, foundation models by id, the request translated (system, merged turns,
 * inference settings), streaming chunk by chunk, a caller hanging up, throttling relayed, a field
 * Converse cannot carry refused.
 */
import type { ChatBody, ChatRequestMessage } from '../../src/providers/chat-request';
import type { ChatChunk, ChatRequest } from '../../src/providers/types';
import { startFakeBedrock, type FakeBedrock } from '../fakes/bedrock-server';
import { bedrock, gatewayError } from './bedrock-harness';

let fake: FakeBedrock;

beforeEach(async () => {
  fake = await startFakeBedrock({ streamDelayMs: 5 });
});

afterEach(() => fake.close());

const CUSTOM_MODEL = 'arn:aws:bedrock:us-east-1:123456789012:custom-model/amazon.nova-micro-v1:0:128k/abcdefghijkl';

const request = (model: string, body: Partial<ChatBody> = {}, overrides: Partial<ChatRequest> = {}): ChatRequest => ({
  model,
  body: {
    model,
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hello' },
      { role: 'user', content: 'there' },
    ],
    ...body,
  },
  hosted: false,
  signal: new AbortController().signal,
  ...overrides,
});

async function collect(chunks: AsyncIterable<ChatChunk>): Promise<ChatChunk[]> {
  const out: ChatChunk[] = [];
  for await (const chunk of chunks) out.push(chunk);
  return out;
}

describe('Bedrock chat', () => {
  it('asks for a deployment when a hosted job’s custom model has none named', async () => {
    const err = await gatewayError(bedrock(fake).chat(request(CUSTOM_MODEL, {}, { hosted: true })), 'invalid_request');
    expect(err).toMatchObject({ status: 400, code: 'deployment_required', param: 'x-gateway-aws-bedrock-model' });
    expect(err.message).toMatch(/custom model deployment or provisioned throughput.*x-gateway-aws-bedrock-model/);
    expect(fake.runtime.requests).toHaveLength(0);
  });

  it('passes a custom model on in client mode and relays Bedrock’s refusal', async () => {
    const err = await gatewayError(bedrock(fake).chat(request(CUSTOM_MODEL)), 'provider');
    expect(err).toMatchObject({ status: 400, code: 'ValidationException' });
    expect(err.message).toMatch(/^Amazon Bedrock: Invocation of a custom model on demand is not supported/);
    expect(fake.state.converseCalls.at(-1)).toMatchObject({ modelId: CUSTOM_MODEL });
  });

  it('answers through the deployment in x-gateway-aws-bedrock-model, translating the request for Converse', async () => {
    const deployment = fake.registerDeployment(CUSTOM_MODEL);
    const client = bedrock(fake, { headers: { 'x-gateway-aws-bedrock-model': deployment } });
    const answer = await client.chat(request(CUSTOM_MODEL, { max_tokens: 100, temperature: 0.2, top_p: 0.9, stop: ['END'] }));
    if (answer.stream) throw new Error('expected a whole answer');
    expect(answer.completion).toEqual({
      id: expect.stringMatching(/^chatcmpl-/),
      model: CUSTOM_MODEL,
      created: expect.any(Number),
      // The fake echoes the last turn, its two blocks joined.
      choices: [{ index: 0, content: `Answer from ${deployment}: Hellothere`, refusal: null, toolCalls: [], finishReason: 'stop', logprobs: null }],
      usage: { promptTokens: expect.any(Number), completionTokens: expect.any(Number), totalTokens: expect.any(Number) },
    });
    expect(fake.state.converseCalls).toEqual([
      {
        modelId: deployment,
        stream: false,
        body: {
          system: [{ text: 'Be brief.' }],
          messages: [{ role: 'user', content: [{ text: 'Hello' }, { text: 'there' }] }],
          inferenceConfig: { maxTokens: 100, temperature: 0.2, topP: 0.9, stopSequences: ['END'] },
        },
      },
    ]);
    expect(fake.state.sigv4.runtime).toEqual({ verified: 1, failures: [] });
  });

  it('calls a foundation model by its id, and reports a cut answer as length', async () => {
    const answer = await bedrock(fake).chat(request('amazon.nova-micro-v1:0', { max_tokens: 2 }));
    if (answer.stream) throw new Error('expected a whole answer');
    expect(answer.completion).toMatchObject({ choices: [{ content: 'Answer from ', finishReason: 'length' }], usage: { completionTokens: 2 } });
  });

  it('streams deltas as the runtime sends them, then the finish reason and the usage', async () => {
    const answer = await bedrock(fake).chat(request('amazon.nova-lite-v1:0', { stream: true }));
    if (!answer.stream) throw new Error('expected a stream');
    expect(answer).toMatchObject({ id: expect.stringMatching(/^chatcmpl-/), model: 'amazon.nova-lite-v1:0', created: expect.any(Number) });
    const chunks = await collect(answer.chunks);
    const deltas = chunks.filter((c) => c.type === 'delta');
    expect(deltas.length).toBeGreaterThan(2);
    expect(deltas.map((c) => (c.type === 'delta' ? c.content : '')).join('')).toBe('Answer from amazon.nova-lite-v1:0: Hellothere');
    expect(chunks.slice(deltas.length)).toEqual([
      { type: 'finish', finishReason: 'stop' },
      { type: 'usage', usage: { promptTokens: expect.any(Number), completionTokens: expect.any(Number), totalTokens: expect.any(Number) } },
    ]);
    expect(fake.state.converseCalls[0]).toMatchObject({ modelId: 'amazon.nova-lite-v1:0', stream: true });
  });

  it('ends the provider stream when the caller goes away', async () => {
    await fake.close();
    fake = await startFakeBedrock({ streamDelayMs: 50 });
    const caller = new AbortController();
    const words: ChatRequestMessage = { role: 'user', content: 'one two three four five six seven eight nine ten' };
    const answer = await bedrock(fake).chat(request('amazon.nova-lite-v1:0', { stream: true, messages: [words] }, { signal: caller.signal }));
    if (!answer.stream) throw new Error('expected a stream');
    const iterator = answer.chunks[Symbol.asyncIterator]();
    expect((await iterator.next()).value).toMatchObject({ type: 'delta' });
    caller.abort();
    await expect(collect({ [Symbol.asyncIterator]: () => iterator })).rejects.toMatchObject({ kind: 'provider' });
    for (let i = 0; i < 50 && fake.state.abandonedStreams === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(fake.state.abandonedStreams).toBe(1);
  });

  it('relays ThrottlingException as 429 and refuses what Converse cannot carry before any request', async () => {
    fake.runtime.failNext('POST', '/model/', 429, { times: 3 });
    expect(await gatewayError(bedrock(fake).chat(request('amazon.nova-micro-v1:0')))).toMatchObject({ status: 429, code: 'ThrottlingException' });
    const before = fake.runtime.requests.length;
    const seeded = request('amazon.nova-micro-v1:0', { seed: 1 });
    expect(await gatewayError(bedrock(fake).chat(seeded), 'invalid_request')).toMatchObject({ path: ['seed'], code: 'unsupported_parameter' });
    expect(fake.runtime.requests.length).toBe(before);
  });
});
