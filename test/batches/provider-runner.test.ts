/**
 * The provider runner with OpenAI's own batch service, end to end with the official OpenAI SDK against
 * the gateway and the fake OpenAI behind it: the batch is submitted once to the fake's `/v1/batches`
 * (no line goes through chat), followed to `completed`, and its output and error files published in
 * the gateway's file store; cancel mid-run publishes partial output, and so does a batch past its
 * window (expired); a provider failure fails the batch with the provider's reason. Each result line
 * the provider answered is one usage ledger row (`batch: true`), recorded once.
 */
import { randomBytes } from 'node:crypto';
import type OpenAI from 'openai';
import { eventually, useOpenAIGateway } from '../fine-tuning/harness';
import { gql } from '../support/gateway';
import { assertOpenAIShape } from '../support/openai-schemas';
import { chatLine, createBatch, fileLines, finished, taggedFile, receivedLines } from './harness';

const SECRET = `sk-fake-${randomBytes(12).toString('hex')}`;

const rig = useOpenAIGateway(SECRET, { GATEWAY_BATCH_POLL_MS: '50', GATEWAY_BATCH_CONCURRENCY: '4' });

afterEach(() => rig.fake.batches.setLinesPerPoll(Number.POSITIVE_INFINITY));

const uniqueFile = (tag: string, count: number) => taggedFile(tag, 'gpt-4o-mini', count);

const viaOpenAI = { 'x-gateway-provider': '@my-openai' };

/** The rig.fake's batch that the gateway batch `id` submitted (found by the metadata the gateway sets). */
const providerBatchOf = (id: string) => eventually(async () => [...rig.fake.batches.batches.values()].find((b) => b.metadata?.gateway_batch_id === id));

/**
 * The files of a runningBatch stopped part-way: the finished requests (at least the two, not all 12)
 * in the output file, every other one counted failed and in the error file; answers the error lines.
 */
async function partialResults(batch: OpenAI.Batches.Batch): Promise<any[]> {
  const done = batch.request_counts!.completed;
  expect(done).toBeGreaterThanOrEqual(2);
  expect(done).toBeLessThan(12);
  expect(batch.request_counts).toEqual({ total: 12, completed: done, failed: 12 - done });
  expect(await fileLines(rig.client, batch.output_file_id!)).toHaveLength(done);
  const errors = await fileLines(rig.client, batch.error_file_id!);
  expect(errors).toHaveLength(12 - done);
  return errors;
}

/** A 12-request batch (custom ids `<tag>-n`) the fake runs one request per poll, once it is in progress with two finished. */
async function runningBatch(word: string) {
  const tag = `${word}-${randomBytes(4).toString('hex')}`;
  rig.fake.batches.setLinesPerPoll(1);
  const created = await createBatch(rig.client, uniqueFile(tag, 12), viaOpenAI);
  await eventually(async () => {
    const now = await rig.client.batches.retrieve(created.id);
    return now.status === 'in_progress' && now.request_counts!.completed >= 2 ? now : undefined;
  });
  return { created, tag };
}

describe('a batch run by OpenAI’s batch service', () => {
  it('is submitted once, followed to completed, and published as OpenAI output and error files', async () => {
    const tag = `prov-${randomBytes(4).toString('hex')}`;
    rig.fake.batches.failRequests([`${tag}-3`], 500);
    const created = await createBatch(rig.client, uniqueFile(tag, 6), viaOpenAI);
    expect(created).toMatchObject({ status: 'validating', gateway: { runner: 'provider', provider: 'openai' } });
    const batch = await finished(rig.client, created.id);
    assertOpenAIShape('Batch', batch, 'finished batch');
    expect(batch).toMatchObject({ status: 'completed', request_counts: { total: 6, completed: 5, failed: 1 } });
    expect(batch.completed_at).toBeGreaterThanOrEqual(batch.finalizing_at!);

    // One provider batch, with the lines as written (model kept), and not one request through chat.
    const remote = await providerBatchOf(created.id);
    expect([...rig.fake.batches.batches.values()].filter((b) => b.metadata?.gateway_batch_id === created.id)).toHaveLength(1);
    expect(remote).toMatchObject({ status: 'completed', endpoint: '/v1/chat/completions', model: 'gpt-4o-mini' });
    expect(rig.fake.state.files.get(remote.input_file_id)).toMatchObject({ purpose: 'batch' });
    const sent = receivedLines(rig.fake.state.files.get(remote.input_file_id)!);
    expect(sent[0]).toEqual(chatLine(`${tag}-1`, 'gpt-4o-mini', `${tag} question 1`));
    expect(rig.fake.state.chatRequests.filter((r) => JSON.stringify(r.body).includes(tag))).toEqual([]);

    // The files are the gateway's (purpose batch_output), joinable on custom_id.
    const outputFile = await rig.client.files.retrieve(batch.output_file_id!);
    assertOpenAIShape('OpenAIFile', outputFile, 'output file');
    expect(outputFile.purpose).toBe('batch_output');
    const output = await fileLines(rig.client, batch.output_file_id!);
    expect(output.map((l) => l.custom_id).sort()).toEqual([1, 2, 4, 5, 6].map((n) => `${tag}-${n}`).sort());
    for (const line of output) {
      expect(line).toMatchObject({ response: { status_code: 200 }, error: null });
      assertOpenAIShape('CreateChatCompletionResponse', line.response.body, 'output line body');
      expect(line.response.body.choices[0].message.content).toContain(`${tag} question ${line.custom_id.split('-').pop()}`);
    }
    const errors = await fileLines(rig.client, batch.error_file_id!);
    expect(errors).toEqual([expect.objectContaining({ custom_id: `${tag}-3`, response: expect.objectContaining({ status_code: 500 }) })]);

    // Usage summed from the output lines.
    const usage = output.reduce((sum, l) => sum + l.response.body.usage.total_tokens, 0);
    expect(batch.usage!.total_tokens).toBe(usage);
    expect(batch.usage!.input_tokens + batch.usage!.output_tokens).toBe(usage);

    // The runner is in the events.
    const read = await gql(rig.gw, `query($id: ID!) { batch(id: $id) { runner events(limit: 50) { message data } } }`, { id: created.id });
    expect(read.body.data.batch.runner).toBe('PROVIDER');
    const statuses = read.body.data.batch.events.map((e: { data: { status: string } }) => e.data.status).reverse();
    expect(statuses[0]).toBe('validating');
    expect(statuses).toEqual(expect.arrayContaining(['in_progress', 'finalizing', 'completed']));
  });

  it('records each line the provider answered in the usage ledger as a batch call, once', async () => {
    const tag = `usage-${randomBytes(4).toString('hex')}`;
    rig.fake.batches.failRequests([`${tag}-2`], 500);
    const { prisma } = rig.gw.gateway.services.db;
    const day = Math.floor(Date.now() / 86_400_000) * 86_400;
    const batchUsage = async () => {
      const page = await rig.client.get<any>('/organization/usage/completions', { query: { start_time: day, group_by: ['batch'], batch: true } });
      return page.data[0].results[0] ?? { input_tokens: 0, output_tokens: 0, num_model_requests: 0 };
    };
    const before = { rows: await prisma.usageRecord.count(), usage: await batchUsage() };

    const batch = await finished(rig.client, (await createBatch(rig.client, uniqueFile(tag, 4), viaOpenAI)).id);
    expect(batch.request_counts).toEqual({ total: 4, completed: 3, failed: 1 });
    const rows = await prisma.usageRecord.findMany({ orderBy: { id: 'asc' }, skip: before.rows });
    const stored = await prisma.batch.findUniqueOrThrow({ where: { id: batch.id } });
    expect(rows).toHaveLength(4);
    for (const row of rows) {
      expect(row).toMatchObject({
        batch: true,
        operation: 'chat',
        apiKeyId: stored.apiKeyId,
        integration: 'my-openai',
        provider: 'openai',
        model: 'gpt-4o-mini',
        mode: 'client',
      });
    }
    // The failed request was a call too: its status, no tokens.
    expect(rows.map((r) => r.status).sort()).toEqual([200, 200, 200, 500]);
    const sum = (pick: (r: (typeof rows)[number]) => number) => rows.reduce((n, r) => n + pick(r), 0);
    expect({ input: sum((r) => r.inputTokens), output: sum((r) => r.outputTokens) }).toEqual({
      input: batch.usage!.input_tokens,
      output: batch.usage!.output_tokens,
    });
    expect(rows.find((r) => r.status === 500)).toMatchObject({ inputTokens: 0, outputTokens: 0 });

    // The Usage API's batch group counts them as this batch's requests and tokens.
    const after = await batchUsage();
    expect({
      input_tokens: after.input_tokens - before.usage.input_tokens,
      output_tokens: after.output_tokens - before.usage.output_tokens,
      num_model_requests: after.num_model_requests - before.usage.num_model_requests,
    }).toEqual({ input_tokens: batch.usage!.input_tokens, output_tokens: batch.usage!.output_tokens, num_model_requests: 4 });

    // The output read again (a runner resuming after a crash) records nothing twice.
    const lines = [...(await fileLines(rig.client, batch.output_file_id!)), ...(await fileLines(rig.client, batch.error_file_id!))];
    const again = async function* () {
      yield* lines;
    };
    const scope = { organisationId: stored.organisationId, workspaceId: stored.workspaceId };
    const facts = { ...scope, apiKeyId: null, provider: 'openai', integration: 'my-openai', model: 'gpt-4o-mini', baseModel: null, mode: 'client' as const };
    expect(await rig.gw.gateway.services.batchRecords.record(scope, batch.id, again(), facts)).toBe(4);
    expect(await prisma.usageRecord.count()).toBe(before.rows + 4);
  });

  it('cancels mid-run: cancelling at once, cancelled with the finished requests in the output file', async () => {
    const { created } = await runningBatch('cancel');
    const cancelling = await rig.client.batches.cancel(created.id);
    expect(cancelling.status).toBe('cancelling');
    const batch = await finished(rig.client, created.id);
    assertOpenAIShape('Batch', batch, 'cancelled batch');
    expect(batch.status).toBe('cancelled');
    const errors = await partialResults(batch);
    for (const line of errors) expect(line).toMatchObject({ response: null, error: { code: 'batch_cancelled' } });
    expect((await providerBatchOf(created.id)).status).toBe('cancelled');
  });

  it('expires past its window: the provider is asked to stop, finished requests published, the rest batch_expired', async () => {
    const { created, tag } = await runningBatch('expire');
    await rig.gw.gateway.services.db.prisma.batch.update({ where: { id: created.id }, data: { expiresAt: new Date() } });
    const batch = await finished(rig.client, created.id);
    assertOpenAIShape('Batch', batch, 'expired batch');
    expect(batch).toMatchObject({ status: 'expired', expired_at: expect.any(Number) });
    const errors = await partialResults(batch);
    for (const line of errors) {
      expect(line).toMatchObject({
        custom_id: expect.stringMatching(new RegExp(`^${tag}-`)),
        response: null,
        error: { code: 'batch_expired', message: 'This request could not be executed before the completion window expired.' },
      });
    }
    // The provider's batch was stopped, not left running.
    expect((await providerBatchOf(created.id)).status).toBe('cancelled');
  });

  it('fails with the provider’s reason when the provider fails the batch', async () => {
    const tag = `fail-${randomBytes(4).toString('hex')}`;
    rig.fake.batches.setLinesPerPoll(0);
    const created = await createBatch(rig.client, uniqueFile(tag, 3), viaOpenAI);
    const remote = await providerBatchOf(created.id);
    rig.fake.batches.fail(remote.id, { code: 'token_limit_exceeded', message: 'Enqueued token limit reached for gpt-4o-mini.' });
    const batch = await finished(rig.client, created.id);
    assertOpenAIShape('Batch', batch, 'failed batch');
    expect(batch).toMatchObject({
      status: 'failed',
      errors: { object: 'list', data: [{ code: 'token_limit_exceeded', message: expect.stringContaining('Enqueued token limit') }] },
    });
    expect(batch).not.toHaveProperty('output_file_id');
  });

  it('ends, not retries for ever, when a result line cannot be read: the requests without a result fail with the reason', async () => {
    const tag = `unread-${randomBytes(4).toString('hex')}`;
    rig.fake.batches.unlabelResults([`${tag}-2`]);
    const batch = await finished(rig.client, (await createBatch(rig.client, uniqueFile(tag, 3), viaOpenAI)).id);
    assertOpenAIShape('Batch', batch, 'batch with an unreadable result');
    expect(batch).toMatchObject({ status: 'completed', request_counts: { total: 3 } });
    const done = batch.output_file_id ? await fileLines(rig.client, batch.output_file_id) : [];
    const failed = await fileLines(rig.client, batch.error_file_id!);
    expect(done.length + failed.length).toBe(3);
    expect(batch.request_counts!.failed).toBe(failed.length);
    expect(failed.length).toBeGreaterThan(0);
    for (const line of failed) {
      expect(line.error).toMatchObject({ code: 'provider_bad_answer', message: expect.stringContaining('custom_id') });
    }
  });

  it('fails at submission with the provider’s refusal (a 4xx), and retries a 5xx without a second provider batch', async () => {
    const tag = `refused-${randomBytes(4).toString('hex')}`;
    rig.fake.failNext('POST', '/v1/batches', 500);
    const retried = await finished(rig.client, (await createBatch(rig.client, uniqueFile(tag, 2), viaOpenAI)).id);
    expect(retried.status).toBe('completed');
    expect([...rig.fake.batches.batches.values()].filter((b) => b.metadata?.gateway_batch_id === retried.id)).toHaveLength(1);

    rig.fake.failNext('POST', '/v1/batches', 400, { message: 'Invalid input file format.' });
    const refused = await finished(rig.client, (await createBatch(rig.client, uniqueFile(`${tag}-b`, 2), viaOpenAI)).id);
    expect(refused).toMatchObject({ status: 'failed', errors: { data: [{ message: expect.stringContaining('Invalid input file format.') }] } });
  });
});
