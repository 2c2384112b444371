/**
 * The usage ledger (issue 26 §1): one row per chat call, hosted and client mode, streamed or not,
 * with the provider's token counts (a stream's final usage chunk, requested upstream even when the
 * caller did not ask for it, and then not relayed), the key, workspace, integration and base model;
 * a row per request of a batch the gateway runs; a row per finished fine-tuning job with its trained
 * tokens; never prompt or answer text; pruning.
 */
import type OpenAI from 'openai';
import { fakeAnswer } from '../fakes/chat';
import { batchFile, createBatch } from '../batches/harness';
import { createIntegration, eventually, sdk } from '../fine-tuning/harness';
import { gatewaySdk } from '../support/answers';
import { api } from '../support/gateway';
import { streamedText, succeededJob } from '../chat/harness';
import { ledgerRows, startUsageGateway, workspaceWithKey, type UsageGateway } from './harness';

const PROMPT = 'Ledger prompt that must never be stored';

let env: UsageGateway;
let team: { workspaceId: string; key: string; keyId: string };
let direct: OpenAI;

beforeAll(async () => {
  env = await startUsageGateway({ GATEWAY_BATCH_POLL_MS: '50' });
  team = await workspaceWithKey(env.gw, 'ledger-team');
  direct = gatewaySdk({ url: env.gw.url, key: team.key }, { apiKey: env.providerKey, headers: { 'x-gateway-provider': 'openai' } });
});

afterAll(() => env.stop());

const tokensOf = (model: string, content: string) => {
  const answer = fakeAnswer(model, [{ role: 'user', content }]);
  return { inputTokens: answer.promptTokens, outputTokens: answer.completionTokens };
};

async function newRows(act: () => Promise<unknown>) {
  const before = (await ledgerRows(env.gw)).length;
  await act();
  return (await ledgerRows(env.gw)).slice(before);
}

describe('chat calls', () => {
  it('records a call not streamed with the usage of its answer, the key and the workspace', async () => {
    let usage: OpenAI.CompletionUsage | undefined;
    const rows = await newRows(async () => {
      usage = (await direct.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: PROMPT }] })).usage;
    });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      operation: 'chat',
      organisationId: expect.any(String),
      workspaceId: team.workspaceId,
      apiKeyId: team.keyId,
      provider: 'openai',
      integration: null,
      model: 'gpt-4o-mini',
      baseModel: null,
      inputTokens: usage?.prompt_tokens,
      outputTokens: usage?.completion_tokens,
      cachedTokens: 0,
      status: 200,
      mode: 'client',
      streamed: false,
      batch: false,
      ttftMs: null,
    });
    expect(rows[0].latencyMs).toBeGreaterThanOrEqual(0);
    expect(rows[0].requestId).toMatch(/^chatcmpl-/);
  });

  it('records a streamed call from the final usage chunk, which the caller gets only when it asked', async () => {
    const rows = await newRows(async () => {
      const plain = await streamedText(await direct.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: PROMPT }], stream: true }));
      expect(plain.chunks.some((c) => c.usage)).toBe(false);
      const asked = await streamedText(
        await direct.chat.completions.create({
          model: 'gpt-4o',
          messages: [{ role: 'user', content: 'Usage please' }],
          stream: true,
          stream_options: { include_usage: true },
        }),
      );
      expect(asked.chunks.at(-1)?.usage?.prompt_tokens).toBe(tokensOf('gpt-4o', 'Usage please').inputTokens);
    });
    // Upstream, the usage was requested for both.
    expect(env.fake.state.chatRequests.slice(-2).map((r) => r.body.stream_options)).toEqual([{ include_usage: true }, { include_usage: true }]);
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatchObject({ streamed: true, status: 200, model: 'gpt-4o', ...tokensOf('gpt-4o', PROMPT) });
    expect(rows[1]).toMatchObject({ streamed: true, status: 200, ...tokensOf('gpt-4o', 'Usage please') });
    expect(rows[0].ttftMs).toBeGreaterThanOrEqual(0);
    expect(rows[0].latencyMs).toBeGreaterThanOrEqual(rows[0].ttftMs ?? 0);
  });

  it('records a failed call with the status the caller got and no tokens', async () => {
    const rows = await newRows(async () => {
      await expect(direct.chat.completions.create({ model: 'no-such-model', messages: [{ role: 'user', content: PROMPT }] })).rejects.toMatchObject({
        status: 404,
      });
    });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ model: 'no-such-model', status: 404, inputTokens: 0, outputTokens: 0 });
  });

  it('records hosted calls with the integration and base model, and the job with its trained tokens', async () => {
    await createIntegration(env.gw, 'ledger-openai', env.providerKey);
    const client = sdk(env.gw);
    const rows = await newRows(async () => {
      const job = await succeededJob(client, '@ledger-openai');
      const completion = await client.chat.completions.create({ model: job.model, messages: [{ role: 'user', content: PROMPT }] });
      expect(completion.usage?.prompt_tokens).toBeGreaterThan(0);
    });
    const jobRow = rows.find((r) => r.operation === 'fine_tuning');
    const trained = env.fake.state.jobs.values().next().value?.trained_tokens;
    expect(jobRow).toMatchObject({
      provider: 'openai',
      integration: 'ledger-openai',
      baseModel: 'gpt-4o-mini-2024-07-18',
      inputTokens: trained,
      status: 200,
      mode: 'hosted',
    });
    const chatRow = rows.find((r) => r.operation === 'chat');
    expect(chatRow).toMatchObject({
      integration: 'ledger-openai',
      baseModel: 'gpt-4o-mini-2024-07-18',
      mode: 'hosted',
      status: 200,
      apiKeyId: expect.any(String),
    });
    expect(chatRow?.model).toBe(jobRow?.model);
  });

  it('records a call through GraphQL', async () => {
    const rows = await newRows(async () => {
      const res = await api(env.gw, 'POST', '/graphql', {
        body: {
          query: 'mutation($input: ChatCompletionInput!) { chatCompletion(input: $input) { usage { promptTokens } } }',
          variables: { input: { model: 'gpt-4o-mini', messages: [{ role: 'USER', content: PROMPT }], integration: '@ledger-openai' } },
        },
      });
      expect(res.body.errors).toBeUndefined();
    });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ integration: 'ledger-openai', mode: 'client', ...tokensOf('gpt-4o-mini', PROMPT) });
  });

  it('records each request of a batch the gateway runs as a batch call', async () => {
    const client = sdk(env.gw);
    const rows = await newRows(async () => {
      // The gateway's own runner (OpenAI's batch service would be the default) sends each line as a chat call.
      const options = { 'x-gateway-provider': '@ledger-openai', 'x-gateway-batch-runner': 'gateway' };
      const created = await createBatch(client, batchFile('gpt-4o-mini', 3), options);
      await eventually(async () => ((await client.batches.retrieve(created.id)).status === 'completed' ? true : undefined), 30_000);
    });
    expect(rows).toHaveLength(3);
    for (const row of rows) {
      // Recorded for the key that created the batch.
      expect(row).toMatchObject({ batch: true, apiKeyId: expect.any(String), integration: 'ledger-openai', model: 'gpt-4o-mini', status: 200, mode: 'client' });
      expect(row.inputTokens).toBeGreaterThan(0);
    }
  });

  it('never stores prompt or answer text', async () => {
    await ledgerRows(env.gw);
    const rows = await env.gw.gateway.services.db.prisma.$queryRawUnsafe<{ row: string }[]>('SELECT row_to_json(u)::text AS row FROM usage_records u');
    const text = rows.map((r) => r.row).join('\n');
    expect(rows.length).toBeGreaterThan(5);
    for (const written of [PROMPT, 'Answer from', 'Question']) expect(text).not.toContain(written);
  });
});

describe('retention', () => {
  it('prunes rows older than GATEWAY_USAGE_RETENTION_DAYS', async () => {
    const { ledger } = env.gw.gateway.services.usage;
    const count = (await ledgerRows(env.gw)).length;
    expect(count).toBeGreaterThan(0);
    expect(await ledger.prune(Date.now() + 89 * 24 * 3600 * 1000)).toBe(0);
    expect(await ledger.prune(Date.now() + 91 * 24 * 3600 * 1000)).toBe(count);
    expect(await ledgerRows(env.gw)).toEqual([]);
  });
});
