/**
 * Batches on Amazon Bedrock batch inference (the provider runner), end to end with the `openai` SDK
 * against the fake Bedrock: Converse records in the integration's bucket, one model invocation job
 * with the integration's role (the batch id as its idempotency token), every `.out` object read back
 * into OpenAI's output and error files; a record Bedrock refused lands in the error file with its
 * status. Below Bedrock's record minimum, or with tools or JSON mode, the gateway runner takes the
 * batch, unless the provider runner was asked for: then the create is a 400 naming the reason.
 */
import { api } from '../support/gateway';
import { DEFAULT_BUCKET, ROLE_ARN } from '../providers/bedrock-harness';
import { eventually } from '../fine-tuning/harness';
import { chatLine, fileLines, finished, jsonl, uploadBatchFile, useBedrockGateway } from './harness';

const MODEL = 'anthropic.claude-3-haiku-20240307-v1:0';

// Jobs move only when a test says so; a running job answers 40 records a step.
const on = useBedrockGateway({ stepsPerPoll: 0, batchRecordsPerStep: 40 }, { GATEWAY_BATCH_POLL_MS: '50', GATEWAY_PROVIDER_TIMEOUT_MS: '5000' });

async function createBatch(lines: unknown[], options: Record<string, string> = {}) {
  const file = await uploadBatchFile(on.client, jsonl(lines));
  const body = {
    input_file_id: file.id,
    endpoint: '/v1/chat/completions',
    completion_window: '24h',
    gateway_options: { 'x-gateway-provider': '@my-bedrock', ...options },
  };
  return on.client.batches.create(body as never);
}

/** The fake's job for a gateway batch (its idempotency token is the batch id). */
const jobOf = (batchId: string) => eventually(async () => [...on.fake.state.invocationJobs.values()].find((j) => j.clientRequestToken === batchId));

const requests = (n: number, prefix = 'r') =>
  Array.from({ length: n }, (_, i) => chatLine(`${prefix}-${i + 1}`, MODEL, `Question ${i + 1}`, { max_tokens: 50 }));

describe('batches on Amazon Bedrock batch inference', () => {
  it('submits one Converse job, reads every .out, and joins results and Bedrock’s refusals on custom_id', async () => {
    // Bedrock takes temperature up to 1 only: that record comes back as Bedrock's 400.
    const lines = [...requests(100), chatLine('too-hot', MODEL, 'Hi', { temperature: 1.5 })];
    const created = await createBatch(lines);
    expect(created).toMatchObject({ status: 'validating', gateway: { runner: 'provider', provider: 'bedrock' } });
    const job = await jobOf(created.id);
    expect(job).toMatchObject({ modelId: MODEL, roleArn: ROLE_ARN, modelInvocationType: 'Converse', timeoutDurationInHours: 24 });
    const input = on.fake.s3.getObject(DEFAULT_BUCKET, `gateway-batches/${created.id}/input.jsonl`)!.toString('utf8').split('\n');
    expect(JSON.parse(input[0])).toEqual({
      recordId: 'R0000000000',
      modelInput: { messages: [{ role: 'user', content: [{ text: 'Question 1' }] }], inferenceConfig: { maxTokens: 50 } },
    });

    on.fake.batch.advance(job.jobArn, 6);
    const done = await finished(on.client, created.id);
    expect(done).toMatchObject({ status: 'completed', request_counts: { total: 101, completed: 100, failed: 1 } });
    const output = await fileLines(on.client, done.output_file_id!);
    expect(output).toHaveLength(100);
    expect(new Set(output.map((l) => l.custom_id))).toEqual(new Set(requests(100).map((l) => l.custom_id)));
    expect(output[0]).toMatchObject({
      response: { status_code: 200, body: { object: 'chat.completion', choices: [{ finish_reason: 'stop' }], usage: { total_tokens: expect.any(Number) } } },
    });
    const [refused] = await fileLines(on.client, done.error_file_id!);
    expect(refused).toMatchObject({
      custom_id: 'too-hot',
      response: { status_code: 400, body: { error: { message: expect.stringContaining('temperature') } } },
    });
    expect([...on.fake.state.invocationJobs.values()].filter((j) => j.clientRequestToken === created.id)).toHaveLength(1);
  });

  it('stops the job on cancel and publishes the records it finished; the rest fail as cancelled', async () => {
    const created = await createBatch(requests(100, 'c'));
    const job = await jobOf(created.id);
    on.fake.batch.advance(job.jobArn, 4);
    await on.client.batches.cancel(created.id);
    await eventually(async () => (job.status === 'Stopping' ? true : undefined));
    on.fake.batch.advance(job.jobArn);
    const done = await finished(on.client, created.id);
    expect(done).toMatchObject({ status: 'cancelled', request_counts: { total: 100, completed: 40, failed: 60 } });
    expect(await fileLines(on.client, done.output_file_id!)).toHaveLength(40);
    const errors = await fileLines(on.client, done.error_file_id!);
    expect(new Set(errors.map((l) => l.error?.code))).toEqual(new Set(['batch_cancelled']));
  });

  it('runs on the gateway runner by default what Bedrock’s batch service cannot: too few records, tools, JSON mode', async () => {
    const tool = { type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: {} } } };
    // Plain questions (the gateway runner sends each through hosted chat).
    const plain = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => chatLine(`${prefix}-${i + 1}`, MODEL));
    const cases = [
      { lines: plain(3, 'few'), reason: 'at least 100 requests; this batch has 3' },
      { lines: [...plain(120, 'tool'), chatLine('with-tools', MODEL, 'Look it up', { tools: [tool] })], reason: 'cannot carry tools' },
      // Bedrock's chat carries JSON mode (a forced tool): on the gateway runner that line is answered too.
      {
        lines: [...plain(120, 'json'), chatLine('json-mode', MODEL, 'As JSON', { response_format: { type: 'json_object' } })],
        reason: 'cannot carry response_format',
      },
    ];
    const gatewayRun: string[] = [];
    for (const { lines, reason } of cases) {
      const created = await createBatch(lines);
      gatewayRun.push(created.id);
      expect(created).toMatchObject({ status: 'validating', gateway: { runner: 'gateway', provider: 'bedrock' } });
      const events = await api(on.gw, 'POST', '/graphql', { body: { query: `{ batch(id: "${created.id}") { events(limit: 20) { message } } }` } });
      expect(JSON.stringify(events.body)).toContain(reason);
      const done = await finished(on.client, created.id);
      expect(done).toMatchObject({ status: 'completed', request_counts: { total: lines.length, completed: lines.length, failed: 0 } });
    }
    // A response_format of plain text asks for nothing Converse lacks: Bedrock's batch service keeps it.
    const text = await createBatch([...requests(100, 'text'), chatLine('as-text', MODEL, 'Plainly', { response_format: { type: 'text' } })]);
    expect(text).toMatchObject({ gateway: { runner: 'provider' } });
    const textJob = await jobOf(text.id);
    await on.client.batches.cancel(text.id);
    await eventually(async () => (textJob.status === 'Stopping' ? true : undefined));
    on.fake.batch.advance(textJob.jobArn);
    expect(await finished(on.client, text.id)).toMatchObject({ status: 'cancelled' });
    const submitted = [...on.fake.state.invocationJobs.values()].map((j) => j.clientRequestToken);
    for (const id of gatewayRun) expect(submitted).not.toContain(id);
  });

  it('refuses with a 400 naming the reason when the provider runner is asked for what Bedrock’s batch service cannot run', async () => {
    const tool = { type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: {} } } };
    const asked = { 'x-gateway-batch-runner': 'provider' };
    for (const [lines, reason] of [
      [requests(3, 'f'), 'at least 100 requests; this batch has 3'],
      [[...requests(99, 't'), chatLine('with-tools', MODEL, 'Look it up', { tools: [tool] })], 'cannot carry tools'],
    ] as const) {
      const file = await uploadBatchFile(on.client, jsonl(lines));
      const before = on.fake.state.invocationJobs.size;
      const res = await api(on.gw, 'POST', '/v1/batches', {
        body: {
          input_file_id: file.id,
          endpoint: '/v1/chat/completions',
          completion_window: '24h',
          gateway_options: { 'x-gateway-provider': '@my-bedrock', ...asked },
        },
      });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ param: 'gateway_options.x-gateway-batch-runner', message: expect.stringContaining(reason) });
      expect(on.fake.state.invocationJobs.size).toBe(before);
    }
    expect((await on.client.batches.list()).data.filter((b) => b.status === 'failed')).toEqual([]);
  });
});

describe('a gateway-runner batch line on Bedrock', () => {
  // The line's body is OpenAI's request as written (snake_case), exactly as the chat route takes it.
  const body = { max_tokens: 40, temperature: 0.3, top_p: 0.9, stop: ['END'] };
  const converseOf = (question: string) => on.fake.state.converseCalls.find((c) => JSON.stringify(c.body).includes(question));

  it('carries the known fields to Converse as the chat route does, not as fields the gateway does not know', async () => {
    const created = await createBatch([chatLine('tuned', MODEL, 'Batch question', body)], { 'x-gateway-batch-runner': 'gateway' });
    const done = await finished(on.client, created.id);
    expect(done).toMatchObject({ status: 'completed', request_counts: { total: 1, completed: 1, failed: 0 } });
    const chat = await api(on.gw, 'POST', '/v1/chat/completions', {
      body: { model: MODEL, messages: [{ role: 'user', content: 'Route question' }], ...body },
      headers: { 'x-gateway-provider': '@my-bedrock' },
    });
    expect(chat.status).toBe(200);
    const expected = { maxTokens: 40, temperature: 0.3, topP: 0.9, stopSequences: ['END'] };
    expect(converseOf('Batch question')?.body).toMatchObject({ inferenceConfig: expected });
    expect(converseOf('Route question')?.body).toMatchObject({ inferenceConfig: expected });
  });
});
