/**
 * Chat through the gateway's route with Amazon Bedrock in client mode (the OpenAI SDK, AWS settings
 * in headers) against the fake runtime's Converse and ConverseStream: a custom model answers through
 * the deployment named in x-gateway-aws-bedrock-model, streamed and not, with usage; without one the
 * model goes to Bedrock, whose refusal comes back; throttling comes back as 429. Both calls are in the
 * usage ledger with Bedrock's token counts.
 */
import { startFakeBedrock, type FakeBedrock } from '../fakes/bedrock-server';
import { awsHeaders, fakeEndpoints } from '../providers/bedrock-harness';
import { gatewaySdk } from '../support/answers';
import { api, startTestGateway, type TestGateway } from '../support/gateway';
import { expectLedgered } from '../usage/harness';
import { streamedText } from './harness';

const CUSTOM_MODEL = 'arn:aws:bedrock:us-east-1:123456789012:custom-model/amazon.nova-micro-v1:0:128k/abcdefghijkl';

let fake: FakeBedrock;
let gw: TestGateway;
let deployment: string;

beforeAll(async () => {
  fake = await startFakeBedrock();
  gw = await startTestGateway({ ...fakeEndpoints(fake), GATEWAY_PROVIDER_TIMEOUT_MS: '5000' });
  deployment = fake.registerDeployment(CUSTOM_MODEL);
});

afterAll(async () => {
  await gw.stop();
  await fake.close();
});

const headers = (extra: Record<string, string> = {}) => ({ 'x-gateway-provider': 'bedrock', ...awsHeaders(fake), ...extra });
const client = (extra: Record<string, string> = {}) => gatewaySdk(gw, { headers: headers(extra) });

it('answers with the custom model through its deployment, streamed and not', async () => {
  const sdk = client({ 'x-gateway-aws-bedrock-model': deployment });
  const completion = await sdk.chat.completions.create({
    model: CUSTOM_MODEL,
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hello Bedrock' },
    ],
    max_tokens: 64,
  });
  expect(completion).toMatchObject({
    object: 'chat.completion',
    model: CUSTOM_MODEL,
    choices: [{ message: { content: `Answer from ${deployment}: Hello Bedrock` } }],
  });
  expect(completion.usage?.total_tokens).toBeGreaterThan(0);
  expect(fake.state.converseCalls.at(-1)).toMatchObject({
    modelId: deployment,
    stream: false,
    body: { system: [{ text: 'Be brief.' }], inferenceConfig: { maxTokens: 64 } },
  });

  const stream = await sdk.chat.completions.create({
    model: CUSTOM_MODEL,
    messages: [{ role: 'user', content: 'Stream Bedrock' }],
    stream: true,
    stream_options: { include_usage: true },
  });
  const { text, chunks } = await streamedText(stream);
  expect(text).toBe(`Answer from ${deployment}: Stream Bedrock`);
  expect(chunks.some((c) => c.choices[0]?.finish_reason === 'stop')).toBe(true);
  expect(chunks.at(-1)?.usage?.total_tokens).toBeGreaterThan(0);
  expect(fake.state.converseCalls.at(-1)).toMatchObject({ modelId: deployment, stream: true });
  // The usage ledger holds both calls with the tokens Bedrock reported.
  await expectLedgered(gw, 'bedrock', [
    { streamed: false, usage: completion.usage },
    { streamed: true, usage: chunks.at(-1)?.usage },
  ]);
});

it('passes a custom model without a deployment on to Bedrock and relays its refusal (client mode does not second-guess)', async () => {
  const res = await api(gw, 'POST', '/v1/chat/completions', { headers: headers(), body: { model: CUSTOM_MODEL, messages: [{ role: 'user', content: 'Hi' }] } });
  expect(res.status).toBe(400);
  expect(res.body.error).toMatchObject({
    type: 'provider_error',
    code: 'ValidationException',
    message: expect.stringMatching(/^Amazon Bedrock: .*deployment/),
  });
  expect(fake.state.converseCalls.at(-1)).toMatchObject({ modelId: CUSTOM_MODEL });
});

it('relays throttling as 429 provider_error', async () => {
  // The SDK retries throttling (the gateway's policy: 2 more attempts); every attempt is throttled here.
  fake.runtime.failNext('POST', '/model/', 429, { times: 3 });
  const res = await api(gw, 'POST', '/v1/chat/completions', {
    headers: headers({ 'x-gateway-aws-bedrock-model': deployment }),
    body: { model: CUSTOM_MODEL, messages: [{ role: 'user', content: 'Hi' }] },
  });
  expect(res.status).toBe(429);
  expect(res.body.error).toMatchObject({ type: 'provider_error', code: 'ThrottlingException' });
});
