/**
 * A provider that stops sending: before its answer (504 as the status) or in the middle of a stream
 * (the stream ends with a 504 error event instead of hanging), after GATEWAY_PROVIDER_TIMEOUT_MS
 * without a byte; the provider's stream is closed either way. Client mode against the fake OpenAI.
 * The timeout (1.5 s) leaves room for a loaded machine: the first chunk must arrive within it.
 */
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { eventually } from '../fine-tuning/harness';
import { gatewayFetch } from '../support/answers';
import { api, startTestGateway, type TestGateway } from '../support/gateway';
import { sseData } from './harness';

const KEY = 'sk-stall-test';
let fake: FakeOpenAI;
let gw: TestGateway;

beforeAll(async () => {
  fake = await startFakeOpenAI({ apiKey: KEY });
  gw = await startTestGateway({ GATEWAY_OPENAI_BASE_URL: fake.url, GATEWAY_PROVIDER_TIMEOUT_MS: '1500' });
});

afterAll(async () => {
  await gw.stop();
  await fake.close();
});

const headers = { 'x-gateway-provider': 'openai', authorization: `Bearer ${KEY}` };
const messages = [{ role: 'user', content: 'several words to stream here' }];

it('answers 504 provider_error when the provider does not answer in time', async () => {
  fake.delayNext('POST', '/v1/chat/completions', 5_000);
  const started = Date.now();
  const res = await api(gw, 'POST', '/v1/chat/completions', { headers, body: { model: 'gpt-4o-mini', messages } });
  expect(res.status).toBe(504);
  expect(res.body.error).toMatchObject({ type: 'provider_error' });
  expect(Date.now() - started).toBeLessThan(4_000);
});

it('ends a stream that stalls midway with a 504 error event, and closes the provider’s stream', async () => {
  fake.setStreamDelay(5_000);
  try {
    const abandoned = fake.state.abandonedStreams;
    const res = await gatewayFetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', 'x-gateway-api-key': gw.key },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages, stream: true }),
    });
    expect(res.status).toBe(200);
    const events = await sseData(res);
    expect(events).not.toContain('[DONE]');
    expect(JSON.parse(events.at(-1)!)).toEqual({
      error: { message: 'OpenAI sent nothing for 1500 ms: the call was abandoned', type: 'provider_error', param: null, code: 'provider_error' },
    });
    await eventually(async () => (fake.state.abandonedStreams > abandoned ? true : undefined), 5_000);
  } finally {
    fake.setStreamDelay(0);
  }
});
