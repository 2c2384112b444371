/**
 * `model: "@slug/<provider model id>"` (issue 22 §4): a chat call through a stored integration of the
 * caller's workspace without any `x-gateway-provider` header, with the official openai SDK against
 * the fake OpenAI, streamed and not (gatewaySdk validates every answer and chunk against OpenAI's
 * schema). The provider gets its own model id, the caller sees its string; the usage ledger records
 * the integration; a bad, missing or other workspace's slug answers as the header would. GraphQL's
 * chatCompletion takes the same model string.
 */
import { ChatCompletionDocument } from '../graphql/generated/operations';
import { gatewaySdk } from '../support/answers';
import { api } from '../support/gateway';
import { data, run } from '../support/graphql';
import { ledgerRows, startUsageGateway, workspaceWithKey, type UsageGateway } from '../usage/harness';
import { streamedText } from './harness';

let env: UsageGateway;
let other: { key: string };

beforeAll(async () => {
  env = await startUsageGateway();
  other = await workspaceWithKey(env.gw, 'slug-other');
  for (const key of [env.gw.key, other.key]) {
    const slug = key === other.key ? 'theirs' : 'mine';
    const created = await api({ url: env.gw.url, key }, 'POST', '/v1/integrations', {
      body: { slug, provider: 'openai', credentials: { api_key: env.providerKey } },
    });
    expect(created.status).toBe(200);
  }
});

afterAll(() => env.stop());

const sdk = (key = env.gw.key) => gatewaySdk({ url: env.gw.url, key });
const messages = [{ role: 'user' as const, content: 'Hello' }];
const ask = (model: string, headers: Record<string, string> = {}, key = env.gw.key) =>
  api({ url: env.gw.url, key }, 'POST', '/v1/chat/completions', { headers, body: { model, messages } });

it('routes "@slug/<model>" through the integration, sending the provider its model id and echoing the caller its string', async () => {
  const completion = await sdk().chat.completions.create({ model: '@mine/gpt-4o-mini', messages });
  expect(completion.model).toBe('@mine/gpt-4o-mini');
  expect(completion.choices[0].message.content).toBe('Answer from gpt-4o-mini: Hello');
  const sent = env.fake.state.chatRequests.at(-1)!;
  expect(sent.model).toBe('gpt-4o-mini');
  expect(sent.headers.authorization).toBe(`Bearer ${env.providerKey}`);

  const stream = await sdk().chat.completions.create({ model: '@mine/gpt-4o-mini', messages, stream: true });
  const { chunks, text } = await streamedText(stream);
  expect(text).toBe('Answer from gpt-4o-mini: Hello');
  expect(new Set(chunks.map((c) => c.model))).toEqual(new Set(['@mine/gpt-4o-mini']));
  expect(env.fake.state.chatRequests.at(-1)!.model).toBe('gpt-4o-mini');

  const rows = (await ledgerRows(env.gw)).slice(-2);
  expect(rows.map((r) => [r.integration, r.model])).toEqual([
    ['mine', '@mine/gpt-4o-mini'],
    ['mine', '@mine/gpt-4o-mini'],
  ]);
});

it('answers a bad or unknown slug as x-gateway-provider: @slug does, about model', async () => {
  for (const [slug, status] of [
    ['@Not A Slug!', 400],
    ['@nobody', 404],
  ] as const) {
    const viaHeader = await ask('gpt-4o-mini', { 'x-gateway-provider': slug });
    const viaModel = await ask(`${slug}/gpt-4o-mini`);
    expect([viaHeader.status, viaModel.status]).toEqual([status, status]);
    expect(viaModel.body.error).toMatchObject({ type: viaHeader.body.error.type, code: viaHeader.body.error.code, param: 'model' });
  }
});

it("answers another workspace's slug as a missing one", async () => {
  const theirs = await ask('@theirs/gpt-4o-mini');
  const nobody = await ask('@nobody/gpt-4o-mini');
  expect(theirs.status).toBe(404);
  expect(theirs.body.error).toMatchObject({ ...nobody.body.error, message: nobody.body.error.message.replace('nobody', 'theirs') });
  expect((await ask('@theirs/gpt-4o-mini', {}, other.key)).status).toBe(200);
});

it('refuses a missing model id after the slug, naming model', async () => {
  const before = env.fake.state.chatRequests.length;
  for (const model of ['@mine/', '@mine', '@mine/  ']) {
    const res = await ask(model);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', param: 'model' });
  }
  expect(env.fake.state.chatRequests.length).toBe(before);
});

it('takes the same model string in GraphQL chatCompletion', async () => {
  const input = { model: '@mine/gpt-4o-mini', messages: [{ role: 'USER' as const, content: 'From GraphQL' }] };
  const { chatCompletion } = await data(env.gw, ChatCompletionDocument, { input });
  expect(chatCompletion).toMatchObject({ model: '@mine/gpt-4o-mini', message: { content: 'Answer from gpt-4o-mini: From GraphQL' } });
  const missing = await run(env.gw, ChatCompletionDocument, { input: { ...input, model: '@theirs/gpt-4o-mini' } });
  expect(missing.body.errors?.[0]).toMatchObject({ extensions: { code: 'NOT_FOUND' } });
});
