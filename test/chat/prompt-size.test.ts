/**
 * Prompt partials cannot blow a small request up: 24 KB of `{{>big}}` (3 000 of them) naming a
 * 100 000-character partial would make a 300 MB prompt. The expanded size is computed before any
 * string is built, so such a request is refused with 413 `prompt_too_large` on every face (REST client
 * mode, a hosted model, GraphQL), nothing reaches the provider, and the gateway's memory (this process:
 * gateway, fake and test share it) does not grow. The limits (per message, per request) are settings.
 */
import { loadConfig } from '../../src/config';
import { useOpenAIGateway } from '../fine-tuning/harness';
import { ChatCompletionDocument } from '../graphql/generated/operations';
import { api } from '../support/gateway';
import { run } from '../support/graphql';
import { held } from '../support/memory';
import { succeededJob } from './harness';

const KEY = 'sk-prompt-size-0123456789abcdef';
const PARTIAL_CHARS = 100_000;
/** 24 KB of request naming the partial 3 000 times: 300 000 000 characters once expanded. */
const BOMB = '{{>big}}'.repeat(3000);
/** Far below what the expansion would take (hundreds of MB), far above what a refused request holds. */
const MAX_RSS_GROWTH = 100 * 1024 * 1024;

const rig = useOpenAIGateway(KEY);
let job: { id: string; model: string };

beforeAll(async () => {
  job = await succeededJob(rig.client, '@my-openai');
  const partial = await api(rig.gw, 'POST', '/v1/prompts/partials', { body: { name: 'Big', string: 'x'.repeat(PARTIAL_CHARS) } });
  expect(partial.body.slug).toBe('big');
});

const CLIENT_MODE = { 'x-gateway-provider': 'openai', authorization: `Bearer ${KEY}` };

function expectTooLarge(res: { status: number; body: any }, param: string) {
  expect(res.status).toBe(413);
  expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'prompt_too_large', param });
  expect(res.body.error.message).toMatch(/expands to \d+ characters with its prompt partials; .* may hold at most \d+/);
}

it('refuses the 300 MB expansion on REST (client mode and a hosted model) and GraphQL, and memory does not grow', async () => {
  const chats = rig.fake.state.chatRequests.length;
  const before = held().rss;
  const messages = [{ role: 'user', content: BOMB }];
  expectTooLarge(await api(rig.gw, 'POST', '/v1/chat/completions', { body: { model: 'gpt-4o-mini', messages }, headers: CLIENT_MODE }), 'messages.0.content');
  expectTooLarge(await api(rig.gw, 'POST', '/v1/chat/completions', { body: { model: job.model, messages } }), 'messages.0.content');
  const graphql = await run(rig.gw, ChatCompletionDocument, { input: { model: job.model, messages: [{ role: 'USER' as const, content: BOMB }] } });
  expect(graphql.body.data).toBeNull();
  expect(graphql.body.errors?.[0]).toMatchObject({
    message: expect.stringContaining('expands to 300000000 characters'),
    extensions: { code: 'BAD_USER_INPUT', param: 'messages.0.content' },
  });
  expect(held().rss - before).toBeLessThan(MAX_RSS_GROWTH);
  expect(rig.fake.state.chatRequests.length).toBe(chats);
});

it('bounds the messages of a request together, each message being within its own limit', async () => {
  // 4 × 100 000 per message (under 500 000), 1 200 000 in all (over 1 000 000).
  const messages = ['system', 'user', 'user'].map((role) => ({ role, content: '{{>big}}'.repeat(4) }));
  expectTooLarge(await api(rig.gw, 'POST', '/v1/chat/completions', { body: { model: job.model, messages } }), 'messages');
});

it('expands a request within the limits as before', async () => {
  const res = await api(rig.gw, 'POST', '/v1/chat/completions', {
    body: { model: job.model, messages: [{ role: 'user', content: `{{>big}} and {{>big}}` }] },
  });
  expect(res.status).toBe(200);
  expect(rig.fake.state.chatRequests.at(-1)!.body.messages).toEqual([
    { role: 'user', content: `${'x'.repeat(PARTIAL_CHARS)} and ${'x'.repeat(PARTIAL_CHARS)}` },
  ]);
});

it('takes its limits from GATEWAY_CHAT_MAX_MESSAGE_CHARS and GATEWAY_CHAT_MAX_PROMPT_CHARS', () => {
  expect(loadConfig({}).chatLimits).toEqual({ maxMessageChars: 500_000, maxRequestChars: 1_000_000 });
  expect(loadConfig({ GATEWAY_CHAT_MAX_MESSAGE_CHARS: '2000', GATEWAY_CHAT_MAX_PROMPT_CHARS: '5000' }).chatLimits).toEqual({
    maxMessageChars: 2000,
    maxRequestChars: 5000,
  });
});
