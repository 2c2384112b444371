/**
 * Chat with Bedrock through the registry's ProviderClient against the fake runtime: Converse and
 * ConverseStream with the deployment named in x-gateway-aws-bedrock-model, `deployment_required` for
 * a bare custom model, foundation models by id, the request translated (system, merged turns,
 * inference settings), the stream's id, throttling relayed, a field Converse cannot carry refused.
 * Streaming chunk by chunk and a caller hanging up are the adapter contract's (bedrock.adapter.test.ts).
 */
import type { ChatBody } from '../../src/providers/chat-request';
import type { ChatChunk, ChatRequest } from '../../src/providers/types';
import { failure } from '../support/expect';
import { startFakeBedrock, type FakeBedrock } from '../fakes/bedrock-server';
import { bedrock } from './bedrock-harness';

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
    const err = await failure(bedrock(fake).chat(request(CUSTOM_MODEL, {}, { hosted: true })), 'invalid_request');
    expect(err).toMatchObject({ status: 400, code: 'deployment_required', param: 'x-gateway-aws-bedrock-model' });
    expect(err.message).toMatch(/custom model deployment or provisioned throughput.*x-gateway-aws-bedrock-model/);
    expect(fake.runtime.requests).toHaveLength(0);
  });

  it('passes a custom model on in client mode and relays Bedrock’s refusal', async () => {
    const err = await failure(bedrock(fake).chat(request(CUSTOM_MODEL)), 'provider');
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

  it('streams from ConverseStream under a chat completion id (deltas, finish and usage: the adapter contract)', async () => {
    const answer = await bedrock(fake).chat(request('amazon.nova-lite-v1:0', { stream: true }));
    if (!answer.stream) throw new Error('expected a stream');
    expect(answer).toMatchObject({ id: expect.stringMatching(/^chatcmpl-/), model: 'amazon.nova-lite-v1:0', created: expect.any(Number) });
    expect(
      (await collect(answer.chunks))
        .filter((c) => c.type === 'delta')
        .map((c) => (c.type === 'delta' ? c.content : ''))
        .join(''),
    ).toBe('Answer from amazon.nova-lite-v1:0: Hellothere');
    expect(fake.state.converseCalls[0]).toMatchObject({ modelId: 'amazon.nova-lite-v1:0', stream: true });
  });

  it('relays ThrottlingException as 429 and refuses what Converse cannot carry before any request', async () => {
    fake.runtime.failNext('POST', '/model/', 429, { times: 3 });
    expect(await failure(bedrock(fake).chat(request('amazon.nova-micro-v1:0')), 'provider')).toMatchObject({ status: 429, code: 'ThrottlingException' });
    const before = fake.runtime.requests.length;
    const seeded = request('amazon.nova-micro-v1:0', { seed: 1 });
    expect(await failure(bedrock(fake).chat(seeded), 'invalid_request')).toMatchObject({ path: ['seed'], code: 'unsupported_parameter' });
    expect(fake.runtime.requests.length).toBe(before);
  });
});
