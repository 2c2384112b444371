/**
 * The gateway batch runner, end to end with the official OpenAI SDK against the fake OpenAI: a batch
 * runs to `completed` through the hosted chat path, output and error lines in OpenAI's
 * `BatchRequestOutput` shape joinable on `custom_id`; provider errors, 429s, cancel mid-run, expiry,
 * and a runner resuming a crashed one's batch (fine-tuned models of each provider: tuned-models.test.ts).
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { BatchLines } from '../../src/modules/batches/batch-lines.repository';
import type { ChatService } from '../../src/modules/chat/chat.service';
import { eventually, useOpenAIGateway } from '../fine-tuning/harness';
import { gql } from '../support/gateway';
import { assertOpenAIShape } from '../support/openai-schemas';
import { batchRunner, type chatLine, createBatch, fileLines, finished, taggedFile } from './harness';

const SECRET = `sk-fake-${randomBytes(12).toString('hex')}`;

/** The first back-off step after a 5xx (GATEWAY_BATCH_RETRY_BASE_MS, 1 s by default), short here. */
const RETRY_BASE_MS = 200;

const rig = useOpenAIGateway(SECRET, { GATEWAY_BATCH_POLL_MS: '50', GATEWAY_BATCH_CONCURRENCY: '4', GATEWAY_BATCH_RETRY_BASE_MS: String(RETRY_BASE_MS) });

// OpenAI's own batch service would run these by default (provider-runner.test.ts): the gateway runner is asked for.
const GATEWAY_RUNNER = { 'x-gateway-batch-runner': 'gateway' };
const viaOpenAI = { 'x-gateway-provider': '@my-openai', ...GATEWAY_RUNNER };

/** Chat requests the fake received, answered or refused. */
const chatPosts = () => rig.fake.state.requests.filter((r) => r.method === 'POST' && r.path === '/v1/chat/completions').length;

/** Chat requests the fake answered whose question names this tag. */
const answeredFor = (tag: string) => rig.fake.state.chatRequests.filter((r) => JSON.stringify(r.body).includes(tag));

describe('a batch run by the gateway', () => {
  it('runs every request once through the chat path and publishes OpenAI output lines', async () => {
    const tag = `run-${randomBytes(4).toString('hex')}`;
    const created = await createBatch(rig.client, taggedFile(tag, 'gpt-4o-mini', 25), viaOpenAI);
    expect(created.status).toBe('validating');
    const batch = await finished(rig.client, created.id);
    expect(batch).toMatchObject({ status: 'completed', request_counts: { total: 25, completed: 25, failed: 0 }, output_file_id: expect.any(String) });
    expect(batch).not.toHaveProperty('error_file_id');
    expect(batch.in_progress_at).toBeGreaterThanOrEqual(batch.created_at);
    expect(batch.completed_at).toBeGreaterThanOrEqual(batch.finalizing_at!);
    expect(batch.usage!.total_tokens).toBeGreaterThan(0);
    expect(batch.usage!.total_tokens).toBe(batch.usage!.input_tokens + batch.usage!.output_tokens);

    const lines = await fileLines(rig.client, batch.output_file_id!);
    expect(lines.map((l) => l.custom_id).sort()).toEqual(Array.from({ length: 25 }, (_, i) => `${tag}-${i + 1}`).sort());
    for (const line of lines) {
      expect(line).toMatchObject({ id: expect.stringMatching(/^batch_req_/), response: { status_code: 200, request_id: expect.any(String) }, error: null });
      assertOpenAIShape('CreateChatCompletionResponse', line.response.body, 'output line body');
      expect(line.response.body.choices[0].message.content).toContain(`${tag} question ${line.custom_id.split('-').pop()}`);
    }
    // Each request reached the provider exactly once, with the integration's credentials.
    expect(answeredFor(tag)).toHaveLength(25);
    expect(new Set(answeredFor(tag).map((r) => JSON.stringify(r.body))).size).toBe(25);
    expect(answeredFor(tag)[0].headers.authorization).toBe(`Bearer ${SECRET}`);

    // Each request is in the usage ledger as a batch call of the key that created the batch.
    const requestIds = lines.map((l) => l.response.request_id as string);
    const recorded = await eventually(async () => {
      const rows = await rig.gw.gateway.services.db.prisma.usageRecord.findMany({ where: { requestId: { in: requestIds } } });
      return rows.length === 25 ? rows : undefined;
    });
    expect(recorded.every((r) => r.batch && r.apiKeyId !== null && r.integration === 'my-openai')).toBe(true);

    const file = await rig.client.files.retrieve(batch.output_file_id!);
    expect(file).toMatchObject({ purpose: 'batch_output', filename: `batch_${batch.id}_output.jsonl` });
    const read = await gql(rig.gw, `query($id: ID!) { batch(id: $id) { status outputFile { id purpose } events(limit: 10) { message data } } }`, {
      id: batch.id,
    });
    expect(read.body.data.batch).toMatchObject({ status: 'COMPLETED', outputFile: { id: batch.output_file_id, purpose: 'BATCH_OUTPUT' } });
    const statuses = read.body.data.batch.events.map((e: { data: { status?: string } }) => e.data?.status).reverse();
    expect(statuses).toEqual(['validating', 'in_progress', 'finalizing', 'completed']);
    expect(read.body.data.batch.events.at(-2).data.runner).toBe('gateway');
  });

  it('puts requests the provider refuses in the error file with its status code', async () => {
    const tag = `refused-${randomBytes(4).toString('hex')}`;
    const batch = await finished(rig.client, (await createBatch(rig.client, taggedFile(tag, 'no-such-model', 3), viaOpenAI)).id);
    expect(batch).toMatchObject({ status: 'completed', request_counts: { total: 3, completed: 0, failed: 3 }, error_file_id: expect.any(String) });
    expect(batch).not.toHaveProperty('output_file_id');
    const lines = await fileLines(rig.client, batch.error_file_id!);
    expect(lines).toHaveLength(3);
    for (const line of lines) {
      expect(line.custom_id).toMatch(new RegExp(`^${tag}-`));
      expect(line.response.status_code).toBe(404);
      assertOpenAIShape('ErrorResponse', line.response.body, 'error line body');
      expect(line.response.body.error.message).toContain('no-such-model');
    }
  });

  it('slows down on 429s, waiting out Retry-After, without failing requests', async () => {
    const tag = `limited-${randomBytes(4).toString('hex')}`;
    const sentBefore = chatPosts();
    // Two seconds: longer than the first back-off step (one second), so only Retry-After explains the wait.
    rig.fake.failNext('POST', '/v1/chat/completions', 429, { times: 3, retryAfter: '2' });
    const started = Date.now();
    const batch = await finished(rig.client, (await createBatch(rig.client, taggedFile(tag, 'gpt-4o-mini', 5), viaOpenAI)).id);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2000);
    expect(batch).toMatchObject({ status: 'completed', request_counts: { total: 5, completed: 5, failed: 0 } });
    expect(batch).not.toHaveProperty('error_file_id');
    // The three refused requests were sent again, and each request was answered once.
    expect(chatPosts() - sentBefore).toBe(5 + 3);
    expect(answeredFor(tag)).toHaveLength(5);
  });

  it('retries a 5xx with doubling back-off, and fails the request as a bad gateway once the attempts are spent', async () => {
    const tag = `flaky-${randomBytes(4).toString('hex')}`;
    let sentBefore = chatPosts();
    // One request, refused twice: sent again after one back-off step, then after two more.
    rig.fake.failNext('POST', '/v1/chat/completions', 503, { times: 2 });
    const started = Date.now();
    const recovered = await finished(rig.client, (await createBatch(rig.client, taggedFile(tag, 'gpt-4o-mini', 1), viaOpenAI)).id);
    expect(Date.now() - started).toBeGreaterThanOrEqual(3 * RETRY_BASE_MS);
    expect(recovered).toMatchObject({ status: 'completed', request_counts: { total: 1, completed: 1, failed: 0 } });
    expect(chatPosts() - sentBefore).toBe(3);

    // A 500 on every attempt (four, after 1 + 2 + 4 steps of back-off): the request fails with it, the batch still completes.
    sentBefore = chatPosts();
    rig.fake.failNext('POST', '/v1/chat/completions', 500, { times: 4 });
    const failing = Date.now();
    const failed = await finished(rig.client, (await createBatch(rig.client, taggedFile(`${tag}-b`, 'gpt-4o-mini', 1), viaOpenAI)).id, 20_000);
    expect(failed).toMatchObject({ status: 'completed', request_counts: { total: 1, completed: 0, failed: 1 } });
    expect(Date.now() - failing).toBeGreaterThanOrEqual(7 * RETRY_BASE_MS);
    expect(chatPosts() - sentBefore).toBe(4);
    const [line] = await fileLines(rig.client, failed.error_file_id!);
    // As the chat route answers it (docs/chat.md): a provider's 5xx is a bad gateway, with the provider's message.
    expect(line).toMatchObject({ custom_id: `${tag}-b-1`, response: { status_code: 502 }, error: null });
    expect(line.response.body.error.message).toBe('OpenAI: The server had an error');
    assertOpenAIShape('ErrorResponse', line.response.body, 'error line body');
  }, 30_000);

  it('cancels mid-run: finished requests in the output file, the rest as batch_cancelled', async () => {
    const tag = `cancel-${randomBytes(4).toString('hex')}`;
    rig.fake.delayNext('POST', '/v1/chat/completions', 1000, 8);
    const created = await createBatch(rig.client, taggedFile(tag, 'gpt-4o-mini', 30), viaOpenAI);
    await eventually(async () => ((await rig.client.batches.retrieve(created.id)).status === 'in_progress' ? true : undefined));
    const cancelling = await rig.client.batches.cancel(created.id);
    expect(cancelling.status).toBe('cancelling');
    const batch = await finished(rig.client, created.id);
    expect(batch.status).toBe('cancelled');
    expect(batch.cancelled_at).toBeGreaterThanOrEqual(batch.cancelling_at!);
    const { completed, failed, total } = batch.request_counts!;
    expect(total).toBe(30);
    expect(completed + failed).toBe(30);
    expect(completed).toBeGreaterThan(0);
    expect(failed).toBeGreaterThan(0);
    const output = await fileLines(rig.client, batch.output_file_id!);
    const errors = await fileLines(rig.client, batch.error_file_id!);
    expect(output).toHaveLength(completed);
    expect(errors.every((l) => l.response === null && l.error.code === 'batch_cancelled')).toBe(true);
    expect(answeredFor(tag)).toHaveLength(completed);
  });

  it('expires past its window: unfinished requests fail as batch_expired', async () => {
    const tag = `expire-${randomBytes(4).toString('hex')}`;
    rig.fake.delayNext('POST', '/v1/chat/completions', 1000, 4);
    const created = await createBatch(rig.client, taggedFile(tag, 'gpt-4o-mini', 12), viaOpenAI);
    await eventually(async () => ((await rig.client.batches.retrieve(created.id)).status === 'in_progress' ? true : undefined));
    await rig.gw.gateway.services.db.prisma.batch.update({ where: { id: created.id }, data: { expiresAt: new Date() } });
    const batch = await finished(rig.client, created.id);
    expect(batch.status).toBe('expired');
    expect(batch.expired_at).toEqual(expect.any(Number));
    const errors = await fileLines(rig.client, batch.error_file_id!);
    expect(errors.length).toBe(batch.request_counts!.failed);
    expect(errors[0]).toEqual({
      id: expect.any(String),
      custom_id: expect.stringMatching(new RegExp(`^${tag}-`)),
      response: null,
      error: { code: 'batch_expired', message: 'This request could not be executed before the completion window expired.' },
    });
  });
});

describe('a runner taking over a crashed one', () => {
  it('never repeats a finished request, and fails (does not resend) one left without an answer', async () => {
    const { services } = rig.gw.gateway;
    await rig.gw.gateway.batchRunner.stop();
    const tag = `crash-${randomBytes(4).toString('hex')}`;
    const created = await createBatch(rig.client, taggedFile(tag, 'gpt-4o-mini', 6), viaOpenAI);
    const row = await services.db.prisma.batch.findUniqueOrThrow({ where: { id: created.id } });
    const scope = { organisationId: row.organisationId, workspaceId: row.workspaceId };
    // What a crashed runner left: the requests loaded, the first answered, the second sent but not answered.
    const requests = JSON.parse(`[${taggedFile(tag, 'gpt-4o-mini', 6).trim().split('\n').join(',')}]`) as Array<ReturnType<typeof chatLine>>;
    await services.batchLines.add(
      scope,
      created.id,
      requests.map((r, i) => ({ line: i + 1, customId: r.custom_id, body: r.body })),
    );
    await services.db.prisma.batch.update({
      where: { id: created.id },
      data: { status: 'in_progress', requestTotal: 6, leaseOwner: 'crashed', leaseExpiresAt: new Date(Date.now() + 60_000) },
    });
    const first = await services.batchLines.claim(scope, created.id, 'crashed');
    // The first request answered, the second claimed in the same statement, then the crash.
    const outcome = {
      succeeded: true,
      output: { id: 'batch_req_before', custom_id: first!.customId, response: { status_code: 200, request_id: 'x', body: {} }, error: null },
      inputTokens: 1,
      outputTokens: 1,
    };
    const second = await services.batchLines.finish(scope, created.id, first!.line, 'crashed', outcome, true);
    expect(second).toMatchObject({ line: 2, customId: `${tag}-2` });
    // The crashed runner's lease runs out.
    await services.db.prisma.batch.update({ where: { id: created.id }, data: { leaseExpiresAt: new Date(Date.now() - 1000) } });

    const runner = batchRunner(rig.gw.gateway);
    runner.start();
    try {
      const batch = await finished(rig.client, created.id);
      expect(batch).toMatchObject({ status: 'completed', request_counts: { total: 6, completed: 5, failed: 1 } });
      // Only the four requests never sent reached the provider.
      const sent = answeredFor(tag).map((r) => JSON.stringify(r.body));
      expect(sent).toHaveLength(4);
      for (const r of requests.slice(2)) expect(sent.filter((body) => body.includes(r.body.messages[0].content))).toHaveLength(1);
      const errors = await fileLines(rig.client, batch.error_file_id!);
      expect(errors).toEqual([
        expect.objectContaining({ custom_id: `${tag}-2`, response: null, error: expect.objectContaining({ code: 'request_interrupted' }) }),
      ]);
      const output = await fileLines(rig.client, batch.output_file_id!);
      expect(output.find((l) => l.custom_id === `${tag}-1`)).toMatchObject({ id: 'batch_req_before' });
    } finally {
      await runner.stop();
    }
  });
});

describe('a runner whose statement fails mid-batch (the database away for a moment)', () => {
  it('hands the batch back only once no request is in flight: only the request whose answer was lost fails', async () => {
    const { services } = rig.gw.gateway;
    await rig.gw.gateway.batchRunner.stop();
    const tag = `halt-${randomBytes(4).toString('hex')}`;
    // The first answer comes at once and its statement fails; the three sent beside it take 1.5 s, long
    // past the step's hand-back (a fifth of a second later): a runner taking the batch back then would
    // find them running and fail them.
    let calls = 0;
    const chat: Pick<ChatService, 'complete'> = {
      complete: async (...args) => {
        calls += 1;
        if (calls > 1 && calls <= 4) await sleep(1500);
        return services.chat.complete(...args);
      },
    };
    let faults = 1;
    const lines: BatchLines = Object.create(services.batchLines);
    lines.finish = (...args) => (faults-- > 0 ? Promise.reject(new Error('Connection terminated unexpectedly')) : services.batchLines.finish(...args));
    const runner = batchRunner(rig.gw.gateway, { chat, lines });
    const created = await createBatch(rig.client, taggedFile(tag, 'gpt-4o-mini', 8), viaOpenAI);
    runner.start();
    try {
      const batch = await finished(rig.client, created.id);
      expect(batch).toMatchObject({ status: 'completed', request_counts: { total: 8, completed: 7, failed: 1 } });
      const errors = await fileLines(rig.client, batch.error_file_id!);
      expect(errors).toEqual([expect.objectContaining({ response: null, error: expect.objectContaining({ code: 'request_interrupted' }) })]);
      // Every request reached the provider once, the one whose answer was lost included.
      const sent = answeredFor(tag).map((r) => JSON.stringify(r.body));
      expect(sent).toHaveLength(8);
      expect(new Set(sent).size).toBe(8);
    } finally {
      await runner.stop();
    }
  });
});
