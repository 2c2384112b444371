/** What the batch tests share: input files in OpenAI's `BatchRequestInput` lines, and reading output lines. */
import { toFile } from 'openai';
import { createLogger } from '../../src/logger';
import type { RunningGateway } from '../../src/main';
import { BatchRunner, type BatchRunnerParts } from '../../src/modules/batches/batch-runner';
import { unmetered } from '../../src/modules/usage/usage.recorder';
import type OpenAI from 'openai';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { createIntegration, createTestDatabase, newKey, sdk, startHostedGateway, tempDir, type HostedGateway } from '../fine-tuning/harness';

export const chatLine = (customId: string, model: string, content = `Question ${customId}`, body: Record<string, unknown> = {}) => ({
  custom_id: customId,
  method: 'POST',
  url: '/v1/chat/completions',
  body: { model, messages: [{ role: 'user', content }], ...body },
});

export const jsonl = (lines: readonly unknown[]) => lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n') + '\n';

/** A batch file of `count` requests for `model`. */
export const batchFile = (model: string, count: number) => jsonl(Array.from({ length: count }, (_, i) => chatLine(`request-${i + 1}`, model)));

export async function uploadBatchFile(client: OpenAI, content: string) {
  return client.files.create({ file: await toFile(Buffer.from(content), 'requests.jsonl'), purpose: 'batch' });
}

/** Uploads `content` as a batch file and creates a chat batch of it (`gatewayOptions` say which integration runs it). */
export async function createBatch(client: OpenAI, content: string, gatewayOptions?: Record<string, string>): Promise<OpenAI.Batches.Batch> {
  const file = await uploadBatchFile(client, content);
  // `gateway_options` is the gateway's extension, unknown to the SDK's types.
  return client.batches.create({
    input_file_id: file.id,
    endpoint: '/v1/chat/completions',
    completion_window: '24h',
    gateway_options: gatewayOptions,
  } as never);
}

/** The lines of a file's content (`files.content`), parsed. */
export async function fileLines(client: OpenAI, fileId: string): Promise<any[]> {
  const text = await (await client.files.content(fileId)).text();
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line));
}

const FINISHED = new Set(['completed', 'failed', 'expired', 'cancelled']);

/** Polls the batch (as a client would) until it has finished. */
export async function finished(client: OpenAI, id: string, timeoutMs = 30_000): Promise<OpenAI.Batches.Batch> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const batch = await client.batches.retrieve(id);
    if (FINISHED.has(batch.status)) return batch;
    if (Date.now() > deadline) throw new Error(`batch ${id} still ${batch.status}: ${JSON.stringify(batch)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export interface BatchGateway {
  fake: FakeOpenAI;
  gw: HostedGateway;
  client: OpenAI;
  stop(): Promise<void>;
}

/** A hosted gateway beside the fake OpenAI, with the integration `@my-openai` holding `secret`. */
export async function startBatchGateway(secret: string, env: Record<string, string>): Promise<BatchGateway> {
  const fake = await startFakeOpenAI({ apiKey: secret });
  const data = await tempDir('gw-batches-');
  const gw = await startHostedGateway({ fake, database: await createTestDatabase(), dataDir: data.dir, key: newKey(), env });
  await createIntegration(gw, 'my-openai', secret);
  return {
    fake,
    gw,
    client: sdk(gw),
    async stop() {
      await gw.stop();
      await gw.database.drop();
      await fake.close();
      await data.remove();
    },
  };
}

/**
 * The batch gateway of a whole test file: started before its first test, stopped after its last. The
 * object answers once the start is done (read it in a test or a later `beforeAll`).
 */
export function useBatchGateway(secret: string, env: Record<string, string>): BatchGateway {
  const rig = {} as BatchGateway;
  beforeAll(async () => {
    Object.assign(rig, await startBatchGateway(secret, env));
  });
  afterAll(() => rig.stop());
  return rig;
}

/**
 * A batch runner over `gateway`'s services, for a test that starts it where it wants (the gateway
 * itself running none: GATEWAY_BATCH_CONCURRENCY=0); `parts` stand in for the gateway's own.
 */
export function batchRunner(gateway: RunningGateway, parts: Partial<BatchRunnerParts> = {}): BatchRunner {
  const { services } = gateway;
  const all: BatchRunnerParts = {
    batches: services.batchRepository,
    lines: services.batchLines,
    files: services.files,
    chat: services.chat,
    meter: () => unmetered,
    records: services.batchRecords,
    target: (scope, batch) => services.batches.target(scope, batch),
    ...parts,
  };
  return new BatchRunner(all, createLogger('silent'), { pollMs: 50, leaseMs: 5000, concurrency: 4 });
}
