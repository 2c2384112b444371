/**
 * The provider runner submits a batch once: when the process dies between the provider's create and
 * recording the job's id, the runner that resumes the batch finds the provider's job (`find`, by the
 * gateway batch id the create left with it) and adopts it instead of creating a second. The crash is
 * the record failing once after the create went out; the fakes count the creates they received.
 */
import { randomBytes } from 'node:crypto';
import type { ProviderBatchRecords } from '../../src/modules/batches/provider-batch.repository';
import type { RunningGateway } from '../../src/main';
import { eventually, useOpenAIGateway } from '../fine-tuning/harness';
import { batchRunner, chatLine, createBatch, finished, jsonl, useBedrockGateway } from './harness';

/** The gateway's records, with the first `saveJob` failing as a process killed right after the create would. */
function crashingOnceAfterCreate(records: ProviderBatchRecords): { records: ProviderBatchRecords; crashes: () => number } {
  let crashes = 0;
  const wrapped = Object.assign(Object.create(records) as ProviderBatchRecords, {
    saveJob: (...args: Parameters<ProviderBatchRecords['saveJob']>) => {
      if (crashes++ === 0) return Promise.reject(new Error('the process was killed before it recorded the provider job'));
      return records.saveJob(...args);
    },
  });
  return { records: wrapped, crashes: () => crashes };
}

/** Runs `id` with a runner that crashes once after the create, until the batch has its provider job recorded. */
async function runCrashingOnce(gateway: RunningGateway, id: string): Promise<void> {
  const { records, crashes } = crashingOnceAfterCreate(gateway.services.batchRecords);
  const runner = batchRunner(gateway, { records });
  runner.start();
  try {
    await eventually(async () => ((await gateway.services.db.prisma.batch.findUnique({ where: { id } }))?.providerBatchId ? true : undefined), 20_000);
    expect(crashes()).toBeGreaterThanOrEqual(2);
  } finally {
    await runner.stop();
  }
}

describe('OpenAI batch service: a crash between create and record', () => {
  const SECRET = `sk-fake-${randomBytes(12).toString('hex')}`;
  const rig = useOpenAIGateway(SECRET, { GATEWAY_BATCH_POLL_MS: '50', GATEWAY_BATCH_CONCURRENCY: '0' });

  it('adopts the batch OpenAI created instead of creating a second', async () => {
    const { fake, gw, client } = rig;
    const tag = `adopt-${randomBytes(4).toString('hex')}`;
    const content = jsonl(Array.from({ length: 5 }, (_, i) => chatLine(`${tag}-${i + 1}`, 'gpt-4o-mini')));
    const created = await createBatch(client, content, { 'x-gateway-provider': '@my-openai', 'x-gateway-batch-runner': 'provider' });
    const creates = () => fake.state.requests.filter((r) => r.method === 'POST' && r.path === '/v1/batches').length;
    const before = creates();

    await runCrashingOnce(gw.gateway, created.id);
    expect(creates() - before).toBe(1);
    const row = await gw.gateway.services.db.prisma.batch.findUniqueOrThrow({ where: { id: created.id } });
    expect(row.submitAttempts).toBe(1);

    // The adopted job is the one followed to the end: its results come back, once.
    const runner = batchRunner(gw.gateway);
    runner.start();
    try {
      expect(await finished(client, created.id)).toMatchObject({ status: 'completed', request_counts: { total: 5, completed: 5, failed: 0 } });
    } finally {
      await runner.stop();
    }
    expect(creates() - before).toBe(1);
  });
});

describe('Amazon Bedrock batch inference: a crash between create and record', () => {
  const MODEL = 'anthropic.claude-3-haiku-20240307-v1:0';
  const on = useBedrockGateway({ stepsPerPoll: 0, batchRecordsPerStep: 100 }, { GATEWAY_BATCH_POLL_MS: '50', GATEWAY_BATCH_CONCURRENCY: '0' });

  it('adopts the job Bedrock created (found by its name) instead of creating a second', async () => {
    const { fake, gw, client } = on;
    const lines = Array.from({ length: 100 }, (_, i) => chatLine(`b-${i + 1}`, MODEL, `Question ${i + 1}`));
    const created = await createBatch(client, jsonl(lines), { 'x-gateway-provider': '@my-bedrock', 'x-gateway-batch-runner': 'provider' });
    // Every CreateModelInvocationJob call (the fake replays one with a known token; the calls are what counts here).
    const creates = () => fake.control.requests.filter((r) => r.method === 'POST' && r.path === '/model-invocation-job').length;

    await runCrashingOnce(gw.gateway, created.id);
    expect(creates()).toBe(1);
    const jobs = [...fake.state.invocationJobs.values()].filter((j) => j.clientRequestToken === created.id);
    expect(jobs).toHaveLength(1);
    const row = await gw.gateway.services.db.prisma.batch.findUniqueOrThrow({ where: { id: created.id } });
    // The job's handle is its whole ARN (client-mode batch ids wrap the same handle).
    expect(row.providerBatchId).toBe(jobs[0].jobArn);

    const runner = batchRunner(gw.gateway);
    runner.start();
    try {
      fake.batch.advance(jobs[0].jobArn, 6);
      expect(await finished(client, created.id)).toMatchObject({ status: 'completed', request_counts: { total: 100, completed: 100, failed: 0 } });
    } finally {
      await runner.stop();
    }
    expect(creates()).toBe(1);
  });
});
