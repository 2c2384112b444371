/**
 * Hosted-mode chat once warm: resolving `model` (job → integration → decrypted credentials), a stored
 * integration named by `x-gateway-provider: @slug`, and the request's prompt partials cost no SQL statement. A rotated credential, a changed partial and a
 * deleted integration are in force from the next call on; the credentials never reach the logs.
 */
import { randomBytes } from 'node:crypto';
import type OpenAI from 'openai';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { createIntegration, createTestDatabase, newKey, sdk, startHostedGateway, tempDir, type HostedGateway } from '../fine-tuning/harness';
import { api, stopBackgroundWork } from '../support/gateway';
import { succeededJob } from './harness';

const SECRET = `sk-fake-${randomBytes(12).toString('hex')}`;

let fake: FakeOpenAI;
let gw: HostedGateway;
let data: { dir: string; remove(): Promise<void> };
let client: OpenAI;
let job: { id: string; model: string };
let statements: string[] = [];
let partialId: string;

beforeAll(async () => {
  fake = await startFakeOpenAI({ apiKey: SECRET });
  data = await tempDir('gw-hosted-cache-');
  gw = await startHostedGateway({ fake, database: await createTestDatabase(), dataDir: data.dir, key: newKey(), onQuery: (sql) => void statements.push(sql) });
  client = sdk(gw);
  await createIntegration(gw, 'cached-openai', SECRET);
  job = await succeededJob(client, '@cached-openai');
  const partial = await api(gw, 'POST', '/v1/prompts/partials', { body: { name: 'Tone', string: 'Be brief.' } });
  expect(partial.status).toBe(200);
  partialId = partial.body.id;
  // The job monitor, the batch runner and the usage ledger's flushes would show up in the count.
  await stopBackgroundWork(gw);
});

afterAll(async () => {
  await gw.stop();
  await gw.database.drop();
  await fake.close();
  await data.remove();
});

const chat = (content = 'Hi {{>tone}}') => api(gw, 'POST', '/v1/chat/completions', { body: { model: job.model, messages: [{ role: 'user', content }] } });
/** Client mode naming the stored integration (as every line of a gateway-run batch does). */
const namedChat = () =>
  api(gw, 'POST', '/v1/chat/completions', {
    headers: { 'x-gateway-provider': '@cached-openai' },
    body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] },
  });
const sentToProvider = () => fake.state.chatRequests.at(-1)!.body.messages;

it('runs no SQL statement for a warm hosted call, streamed or not', async () => {
  expect((await chat()).status).toBe(200);
  statements = [];
  for (let i = 0; i < 3; i++) expect((await chat()).status).toBe(200);
  const streamed = await api(gw, 'POST', '/v1/chat/completions', {
    body: { model: job.model, stream: true, messages: [{ role: 'user', content: '{{>tone}}' }] },
  });
  expect(streamed.status).toBe(200);
  expect(statements).toEqual([]);
  expect(sentToProvider()).toEqual([{ role: 'user', content: 'Be brief.' }]);
  expect((await namedChat()).status).toBe(200);
  statements = [];
  for (let i = 0; i < 3; i++) expect((await namedChat()).status).toBe(200);
  expect(statements).toEqual([]);
});

it('serves a changed partial text from the next call on', async () => {
  await chat();
  expect((await api(gw, 'PUT', `/v1/prompts/partials/${partialId}`, { body: { string: 'Be very brief.' } })).status).toBe(200);
  expect((await api(gw, 'PUT', `/v1/prompts/partials/${partialId}/makeDefault`, { body: { version: 2 } })).status).toBe(200);
  expect((await chat()).status).toBe(200);
  expect(sentToProvider()).toEqual([{ role: 'user', content: 'Hi Be very brief.' }]);
});

it('uses a rotated credential from the next call on, and a deleted integration no more', async () => {
  await chat();
  expect((await api(gw, 'PATCH', '/v1/integrations/cached-openai', { body: { credentials: { api_key: 'sk-revoked-elsewhere' } } })).status).toBe(200);
  expect((await chat()).status).not.toBe(200);
  expect((await namedChat()).status).not.toBe(200);
  expect((await api(gw, 'PATCH', '/v1/integrations/cached-openai', { body: { credentials: { api_key: SECRET } } })).status).toBe(200);
  expect((await chat()).status).toBe(200);
  expect((await namedChat()).status).toBe(200);
  expect((await api(gw, 'DELETE', '/v1/integrations/cached-openai')).status).toBe(200);
  const gone = await chat();
  expect(gone.status).toBe(404);
  expect(gone.body.error.message).toContain('cached-openai');
  expect((await namedChat()).status).toBe(404);
  expect(gw.logs.join('\n')).not.toContain(SECRET);
});
