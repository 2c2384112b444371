/**
 * Batches on Amazon Bedrock batch inference (the provider runner), end to end with the `openai` SDK
 * against the fake Bedrock: Converse records in the integration's bucket, one model invocation job
 * with the integration's role (the batch id as its idempotency token), every `.out` object read back
 * into OpenAI's output and error files; a record Bedrock refused lands in the error file with its
 * status. Below Bedrock's record minimum, or with tools, the gateway runner takes the batch.
 */
import { startFakeBedrock, type FakeBedrock } from '../fakes/bedrock-server';
import { api, startTestGateway, type TestGateway } from '../support/gateway';
import { awsHeaders, DEFAULT_BUCKET, fakeEndpoints, ROLE_ARN } from '../providers/bedrock-harness';
import { eventually, sdk } from '../fine-tuning/harness';
import { chatLine, fileLines, finished, jsonl, uploadBatchFile } from './harness';

const MODEL = 'anthropic.claude-3-haiku-20240307-v1:0';

let fake: FakeBedrock;
let gw: TestGateway;
let client: ReturnType<typeof sdk>;

beforeAll(async () => {
  // Jobs move only when a test says so; a running job answers 40 records a step.
  fake = await startFakeBedrock({ stepsPerPoll: 0, batchRecordsPerStep: 40 });
  gw = await startTestGateway({ ...fakeEndpoints(fake), GATEWAY_BATCH_POLL_MS: '50', GATEWAY_PROVIDER_TIMEOUT_MS: '5000' });
  client = sdk(gw);
  const headers = awsHeaders(fake);
  const res = await api(gw, 'POST', '/v1/integrations', {
    body: {
      slug: 'my-bedrock',
      provider: 'bedrock',
      credentials: { aws_access_key_id: headers['x-gateway-aws-access-key-id'], aws_secret_access_key: headers['x-gateway-aws-secret-access-key'] },
      options: { 'x-gateway-aws-region': fake.region, 'x-gateway-aws-s3-bucket': DEFAULT_BUCKET, 'x-gateway-aws-role-arn': ROLE_ARN },
    },
  });
  if (res.status !== 200) throw new Error(`integration not created: ${JSON.stringify(res.body)}`);
});

afterAll(async () => {
  await gw.stop();
  await fake.close();
});

async function createBatch(lines: unknown[], options: Record<string, string> = {}) {
  const file = await uploadBatchFile(client, jsonl(lines));
  const body = {
    input_file_id: file.id,
    endpoint: '/v1/chat/completions',
    completion_window: '24h',
    gateway_options: { 'x-gateway-provider': '@my-bedrock', ...options },
  };
  return client.batches.create(body as never);
}

/** The fake's job for a gateway batch (its idempotency token is the batch id). */
const jobOf = (batchId: string) => eventually(async () => [...fake.state.invocationJobs.values()].find((j) => j.clientRequestToken === batchId));

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
    const input = fake.s3.getObject(DEFAULT_BUCKET, `gateway-batches/${created.id}/input.jsonl`)!.toString('utf8').split('\n');
    expect(JSON.parse(input[0])).toEqual({
      recordId: 'R0000000000',
      modelInput: { messages: [{ role: 'user', content: [{ text: 'Question 1' }] }], inferenceConfig: { maxTokens: 50 } },
    });

    fake.batch.advance(job.jobArn, 6);
    const done = await finished(client, created.id);
    expect(done).toMatchObject({ status: 'completed', request_counts: { total: 101, completed: 100, failed: 1 } });
    const output = await fileLines(client, done.output_file_id!);
    expect(output).toHaveLength(100);
    expect(new Set(output.map((l) => l.custom_id))).toEqual(new Set(requests(100).map((l) => l.custom_id)));
    expect(output[0]).toMatchObject({
      response: { status_code: 200, body: { object: 'chat.completion', choices: [{ finish_reason: 'stop' }], usage: { total_tokens: expect.any(Number) } } },
    });
    const [refused] = await fileLines(client, done.error_file_id!);
    expect(refused).toMatchObject({
      custom_id: 'too-hot',
      response: { status_code: 400, body: { error: { message: expect.stringContaining('temperature') } } },
    });
    expect([...fake.state.invocationJobs.values()].filter((j) => j.clientRequestToken === created.id)).toHaveLength(1);
  });

  it('stops the job on cancel and publishes the records it finished; the rest fail as cancelled', async () => {
    const created = await createBatch(requests(100, 'c'));
    const job = await jobOf(created.id);
    fake.batch.advance(job.jobArn, 4);
    await client.batches.cancel(created.id);
    await eventually(async () => (job.status === 'Stopping' ? true : undefined));
    fake.batch.advance(job.jobArn);
    const done = await finished(client, created.id);
    expect(done).toMatchObject({ status: 'cancelled', request_counts: { total: 100, completed: 40, failed: 60 } });
    expect(await fileLines(client, done.output_file_id!)).toHaveLength(40);
    const errors = await fileLines(client, done.error_file_id!);
    expect(new Set(errors.map((l) => l.error?.code))).toEqual(new Set(['batch_cancelled']));
  });

  it('fails a batch Bedrock cannot run on its batch service when the provider runner is asked for: too few records, tools', async () => {
    const few = await createBatch(requests(3, 'f'), { 'x-gateway-batch-runner': 'provider' });
    expect(await finished(client, few.id)).toMatchObject({
      status: 'failed',
      errors: { data: [{ message: expect.stringContaining('at least 100 requests') }] },
    });
    const tool = { type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: {} } } };
    const tools = await createBatch([...requests(99, 't'), chatLine('with-tools', MODEL, 'Look it up', { tools: [tool] })], {
      'x-gateway-batch-runner': 'provider',
    });
    expect(await finished(client, tools.id)).toMatchObject({ status: 'failed', errors: { data: [{ message: expect.stringContaining('tools') }] } });
    const submitted = [...fake.state.invocationJobs.values()].map((j) => j.clientRequestToken);
    expect(submitted).not.toContain(few.id);
    expect(submitted).not.toContain(tools.id);
  });
});
