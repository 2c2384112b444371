/**
 * A provider whose answer changed shape (a field gone, a field of another type) is answered as the
 * provider's failure, over HTTP: 502 in the error shape, `code: "provider_bad_answer"`, the message
 * naming the provider and the field, and the call not repeated (the same answer would come back).
 * The fakes doctor one answer each (`reshapeNext`).
 */
import OpenAI, { toFile } from 'openai';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { startFakeTogether, type FakeTogether } from '../fakes/together-server';
import { dataset } from '../fine-tuning/harness';
import { gatewaySdk } from '../support/answers';
import { api, startTestGateway, type TestGateway } from '../support/gateway';

const TOGETHER_KEY = 'tg-answers-0123456789abcdef';
const OPENAI_KEY = 'sk-answers-0123456789abcdef';

let together: FakeTogether;
let openai: FakeOpenAI;
let gw: TestGateway;

beforeAll(async () => {
  [together, openai] = await Promise.all([startFakeTogether({ apiKey: TOGETHER_KEY }), startFakeOpenAI({ apiKey: OPENAI_KEY })]);
  gw = await startTestGateway({ GATEWAY_TOGETHER_BASE_URL: together.url, GATEWAY_OPENAI_BASE_URL: openai.url, GATEWAY_PROVIDER_TIMEOUT_MS: '5000' });
});

afterAll(async () => {
  await gw.stop();
  await Promise.all([together.close(), openai.close()]);
});

const togetherHeaders = { 'x-gateway-provider': 'together-ai', authorization: `Bearer ${TOGETHER_KEY}` };

/** Drops `field` from an object answer. */
const without =
  (field: string) =>
  (body: unknown): unknown => {
    const copy = { ...(body as Record<string, unknown>) };
    delete copy[field];
    return copy;
  };

async function togetherFile(): Promise<string> {
  const sdk = gatewaySdk(gw, { apiKey: TOGETHER_KEY, headers: { 'x-gateway-provider': 'together-ai' } });
  return (await sdk.files.create({ file: await toFile(Buffer.from(dataset(3)), 'train.jsonl'), purpose: 'fine-tune' })).id;
}

it('answers a Together file without `id` as a 502 naming the provider and the field, without asking again', async () => {
  const id = await togetherFile();
  together.reshapeNext('GET', `/v1/files/${id}`, without('id'));
  const seen = together.state.requests.length;

  const res = await api(gw, 'GET', `/v1/files/${id}`, { headers: togetherHeaders });

  expect(res.status).toBe(502);
  expect(res.body).toEqual({
    error: { type: 'provider_error', code: 'provider_bad_answer', message: 'Together AI answered without `id`', param: null },
  });
  // A GET is retried on a 5xx, but not on an answer that was read and found unusable.
  expect(together.state.requests.slice(seen).filter((r) => r.path === `/v1/files/${id}`)).toHaveLength(1);
  // The next answer is whole again: the same call succeeds.
  expect((await api(gw, 'GET', `/v1/files/${id}`, { headers: togetherHeaders })).body).toMatchObject({ id, object: 'file' });
});

it('names a field of another type inside a list by its place in the answer', async () => {
  await togetherFile();
  together.reshapeNext('GET', '/v1/files', (body) => {
    const list = body as { data: Record<string, unknown>[] };
    list.data[0].created_at = '2026-11-27T00:00:00Z';
    return list;
  });

  const res = await api(gw, 'GET', '/v1/files', { headers: togetherHeaders });

  expect(res.status).toBe(502);
  expect(res.body.error).toMatchObject({
    code: 'provider_bad_answer',
    message: 'Together AI answered `data[0].created_at` as a string where a number was expected',
  });
});

it('fails an OpenAI SDK upload whose answer lost `filename` the same way', async () => {
  const sdk = gatewaySdk(gw, { apiKey: OPENAI_KEY, headers: { 'x-gateway-provider': 'openai' } });
  openai.reshapeNext('POST', '/v1/files', without('filename'));

  const failure = await sdk.files.create({ file: await toFile(Buffer.from(dataset(3)), 'train.jsonl'), purpose: 'fine-tune' }).catch((err: unknown) => err);

  expect(failure).toBeInstanceOf(OpenAI.APIError);
  expect(failure).toMatchObject({ status: 502, code: 'provider_bad_answer', message: expect.stringContaining('OpenAI answered without `filename`') });
});
