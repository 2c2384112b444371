/** What the usage tests share: a gateway on the fake OpenAI, workspaces with their own keys, the ledger's rows. */
import { randomBytes } from 'node:crypto';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { createTestDatabase, newKey, startHostedGateway, tempDir, type HostedGateway } from '../fine-tuning/harness';
import { api } from '../support/gateway';
import type { UsageRow } from '../../src/modules/usage/usage.model';

export interface UsageGateway {
  gw: HostedGateway;
  fake: FakeOpenAI;
  /** The provider key client-mode calls send. */
  providerKey: string;
  stop(): Promise<void>;
}

export async function startUsageGateway(env: Record<string, string> = {}): Promise<UsageGateway> {
  const providerKey = `sk-fake-${randomBytes(12).toString('hex')}`;
  const fake = await startFakeOpenAI({ apiKey: providerKey });
  const data = await tempDir('gw-usage-');
  const gw = await startHostedGateway({ fake, database: await createTestDatabase(), dataDir: data.dir, key: newKey(), env });
  return {
    gw,
    fake,
    providerKey,
    async stop() {
      await gw.stop();
      await gw.database.drop();
      await fake.close();
      await data.remove();
    },
  };
}

/** A new workspace of the gateway's organisation and a key of it. */
export async function workspaceWithKey(gw: { url: string; key: string }, slug: string): Promise<{ workspaceId: string; key: string; keyId: string }> {
  const workspace = await api(gw, 'POST', '/v1/admin/workspaces', { body: { name: slug, slug } });
  if (workspace.status !== 200) throw new Error(JSON.stringify(workspace.body));
  const issued = await api(gw, 'POST', '/v1/api-keys', { body: { name: `${slug} key`, workspace_id: workspace.body.id } });
  if (issued.status !== 200) throw new Error(JSON.stringify(issued.body));
  return { workspaceId: workspace.body.id, key: issued.body.key, keyId: issued.body.id };
}

/** The ledger's rows once everything buffered is written, oldest first. */
export async function ledgerRows(gw: Pick<HostedGateway, 'gateway'>) {
  await gw.gateway.services.usage.ledger.flush();
  return gw.gateway.services.db.prisma.usageRecord.findMany({ orderBy: { id: 'asc' } });
}

/** A chat call as the caller saw it: streamed or not, and the usage its answer (or its last chunk) reported. */
export interface MeteredCall {
  streamed: boolean;
  usage: { prompt_tokens: number; completion_tokens: number } | null | undefined;
}

/**
 * The ledger's newest rows are these calls', in order: the provider, succeeded, streamed or not, and
 * the tokens each answer reported (`usage` undefined: the caller did not ask for it, so only that
 * tokens were recorded is checked).
 */
export async function expectLedgered(gw: Pick<HostedGateway, 'gateway'>, provider: string, calls: MeteredCall[]): Promise<void> {
  const rows = (await ledgerRows(gw)).slice(-calls.length);
  expect(rows.map((r) => ({ provider: r.provider, status: r.status, streamed: r.streamed, input: r.inputTokens, output: r.outputTokens }))).toEqual(
    calls.map(({ streamed, usage }) => ({
      provider,
      status: 200,
      streamed,
      input: usage ? usage.prompt_tokens : expect.any(Number),
      output: usage ? usage.completion_tokens : expect.any(Number),
    })),
  );
  for (const row of rows) expect(row.inputTokens * row.outputTokens).toBeGreaterThan(0);
}

/** A client-mode chat call's ledger row (for the tests of the ledger's own writes). */
export const chatRow = (organisationId: string, requestId: string): UsageRow => ({
  time: new Date(),
  organisationId,
  workspaceId: null,
  apiKeyId: null,
  operation: 'chat',
  provider: 'openai',
  integration: null,
  model: 'gpt-4o-mini',
  baseModel: null,
  inputTokens: 3,
  cachedTokens: 0,
  outputTokens: 2,
  latencyMs: 10,
  ttftMs: 5,
  status: 200,
  mode: 'client',
  streamed: true,
  batch: false,
  requestId,
});
