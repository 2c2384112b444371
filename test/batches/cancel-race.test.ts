/**
 * A batch cancelled before it went to `in_progress` — while the runner reads its input
 * file, or before any runner has claimed it — still counts every request of its file: `total` is the
 * file's lines, every one failed as `batch_cancelled` in the error file, none sent to the provider.
 * The gateway serving the API runs no batches (GATEWAY_BATCH_CONCURRENCY=0); each test starts its own
 * runner, so that the cancel lands exactly where the test puts it.
 */
import { randomBytes } from 'node:crypto';
import type OpenAI from 'openai';
import type { Scope } from '../../src/auth/scope';
import type { BatchRunnerParts } from '../../src/modules/batches/batch-runner';
import { type HostedGateway, useOpenAIGateway } from '../fine-tuning/harness';
import { batchRunner, chatLine, createBatch, fileLines, finished, jsonl } from './harness';

const SECRET = `sk-fake-${randomBytes(12).toString('hex')}`;
const LINES = 30;
const rig = useOpenAIGateway(SECRET, { GATEWAY_BATCH_POLL_MS: '50', GATEWAY_BATCH_CONCURRENCY: '0' });

let gw: HostedGateway;
let client: OpenAI;
beforeAll(() => {
  ({ gw, client } = rig);
});

const runner = (files?: BatchRunnerParts['files']) => batchRunner(gw.gateway, files ? { files } : {});

async function created(tag: string, runnerName = 'gateway'): Promise<{ batch: OpenAI.Batches.Batch; scope: Scope }> {
  const content = jsonl(Array.from({ length: LINES }, (_, i) => chatLine(`${tag}-${i + 1}`, 'gpt-4o-mini', `${tag} question`)));
  const batch = await createBatch(client, content, { 'x-gateway-provider': '@my-openai', 'x-gateway-batch-runner': runnerName });
  const row = await gw.gateway.services.db.prisma.batch.findUniqueOrThrow({ where: { id: batch.id } });
  return { batch, scope: { organisationId: row.organisationId, workspaceId: row.workspaceId } };
}

/**
 * A runner started now (`files` standing in for the gateway's) runs the batch to `cancelled` with
 * every line of its file in the error file as batch_cancelled, none sent; the runner is stopped after.
 */
async function runsAllCancelled(id: string, tag: string, files?: BatchRunnerParts['files']): Promise<void> {
  const later = runner(files);
  later.start();
  try {
    await expectAllCancelled(id, tag);
  } finally {
    await later.stop();
  }
}

/** The batch ended `cancelled`, every line in the error file as batch_cancelled, none sent to the provider. */
async function expectAllCancelled(id: string, tag: string): Promise<void> {
  const batch = await finished(client, id);
  expect(batch).toMatchObject({ status: 'cancelled', request_counts: { total: LINES, completed: 0, failed: LINES } });
  expect(batch.output_file_id ?? null).toBeNull();
  const errors = await fileLines(client, batch.error_file_id!);
  expect(errors.map((l) => l.custom_id).sort()).toEqual(Array.from({ length: LINES }, (_, i) => `${tag}-${i + 1}`).sort());
  for (const line of errors) expect(line).toMatchObject({ response: null, error: { code: 'batch_cancelled' } });
  expect(rig.fake.state.chatRequests.filter((r) => JSON.stringify(r.body).includes(tag))).toEqual([]);
}

describe('a batch cancelled before it runs', () => {
  it('counts and fails every line when cancelled while the runner reads its input file', async () => {
    const tag = `loading-${randomBytes(4).toString('hex')}`;
    const { batch, scope } = await created(tag);
    const { services } = gw.gateway;
    // The cancel arrives as the runner opens the input file: after the claim, before the batch is in_progress.
    const files: BatchRunnerParts['files'] = {
      find: (...args) => services.files.find(...args),
      write: (...args) => services.files.write(...args),
      openContent: async (s, fileId) => {
        if (fileId === batch.input_file_id) expect((await services.batches.cancel(scope, batch.id)).status).toBe('cancelling');
        return services.files.openContent(s, fileId);
      },
    };
    await runsAllCancelled(batch.id, tag, files);
  });

  it('counts and fails every line when cancelled before any runner claimed it', async () => {
    const tag = `unclaimed-${randomBytes(4).toString('hex')}`;
    const { batch } = await created(tag);
    expect((await client.batches.cancel(batch.id)).status).toBe('cancelling');
    await runsAllCancelled(batch.id, tag);
  });

  it('counts and fails every line of a provider-run batch cancelled before it was submitted', async () => {
    const tag = `unsubmitted-${randomBytes(4).toString('hex')}`;
    const { batch } = await created(tag, 'provider');
    expect((await client.batches.cancel(batch.id)).status).toBe('cancelling');
    await runsAllCancelled(batch.id, tag);
    expect(rig.fake.state.requests.filter((r) => r.method === 'POST' && r.path === '/v1/batches')).toEqual([]);
  });
});
