/**
 * Batches on Fireworks batch inference (the provider runner), end to end with the `openai` SDK against
 * the fake Fireworks: the requests become a dataset of `{custom_id, body}` lines (no model: the job names
 * it), one batchInferenceJob runs them, and its output dataset (results and errors) is read back into
 * OpenAI's files. A LoRA of the account is left to the gateway runner.
 */
import { startFakeFireworks, type FakeFireworks } from '../fakes/fireworks-server';
import { api, startTestGateway, type TestGateway } from '../support/gateway';
import { eventually, sdk } from '../fine-tuning/harness';
import { chatLine, fileLines, finished, jsonl, uploadBatchFile } from './harness';

const KEY = 'fw-batch-test-key';
const ACCOUNT = 'acme-labs';
const BASE = 'accounts/fireworks/models/llama-v3p1-8b-instruct';

let fake: FakeFireworks;
let gw: TestGateway;
let client: ReturnType<typeof sdk>;

beforeAll(async () => {
  fake = await startFakeFireworks({ apiKey: KEY, accountId: ACCOUNT, batchRowsPerStep: 1 });
  gw = await startTestGateway({ GATEWAY_FIREWORKS_BASE_URL: fake.origin, GATEWAY_BATCH_POLL_MS: '50' });
  client = sdk(gw);
  const res = await api(gw, 'POST', '/v1/integrations', {
    body: { slug: 'my-fireworks', provider: 'fireworks-ai', credentials: { api_key: KEY }, options: { 'x-gateway-fireworks-account-id': ACCOUNT } },
  });
  if (res.status !== 200) throw new Error(`integration not created: ${JSON.stringify(res.body)}`);
});

afterAll(async () => {
  await gw.stop();
  await fake.close();
});

async function createBatch(lines: unknown[]) {
  const file = await uploadBatchFile(client, jsonl(lines));
  const body = {
    input_file_id: file.id,
    endpoint: '/v1/chat/completions',
    completion_window: '24h',
    gateway_options: { 'x-gateway-provider': '@my-fireworks' },
  };
  return client.batches.create(body as never);
}

const jobOf = (batchId: string) => eventually(async () => fake.batch.jobs.get(`gw-batch-${batchId}`));

describe('batches on Fireworks batch inference', () => {
  it('uploads a dataset of {custom_id, body} lines, runs one job, and reads its results and errors', async () => {
    // Fireworks answers JSON mode only when the conversation asks for JSON: that request comes back refused.
    const lines = [...['a', 'b', 'c'].map((id) => chatLine(id, BASE)), chatLine('json', BASE, 'Hello', { response_format: { type: 'json_object' } })];
    const created = await createBatch(lines);
    expect(created).toMatchObject({ status: 'validating', gateway: { runner: 'provider', provider: 'fireworks-ai' } });
    const done = await finished(client, created.id);
    expect(done).toMatchObject({ status: 'completed', request_counts: { total: 4, completed: 3, failed: 1 } });

    const job = await jobOf(created.id);
    expect(job).toMatchObject({ model: BASE, inputDatasetId: `accounts/${ACCOUNT}/datasets/gw-batch-${created.id}-input`, state: 'JOB_STATE_COMPLETED' });
    const input = fake.state.datasetFiles.get(`gw-batch-${created.id}-input`)!.get('requests.jsonl')!.content!.toString('utf8');
    expect(JSON.parse(input.split('\n')[0])).toEqual({ custom_id: 'a', body: { messages: [{ role: 'user', content: 'Question a' }] } });

    const output = await fileLines(client, done.output_file_id!);
    expect(output.map((l) => l.custom_id).sort()).toEqual(['a', 'b', 'c']);
    expect(output[0]).toMatchObject({ response: { status_code: 200, body: { object: 'chat.completion', usage: { total_tokens: expect.any(Number) } } } });
    const [refused] = await fileLines(client, done.error_file_id!);
    expect(refused).toMatchObject({ custom_id: 'json', response: { status_code: 400, body: { error: { message: expect.stringContaining('json') } } } });
  });

  it('expires with the rows Fireworks saved; the rest fail as batch_expired', async () => {
    const created = await createBatch(['x', 'y', 'z'].map((id) => chatLine(id, BASE)));
    fake.batch.expire((await jobOf(created.id)).name.split('/').pop()!);
    const done = await finished(client, created.id);
    expect(done.status).toBe('expired');
    expect(done.request_counts!.completed + done.request_counts!.failed).toBe(3);
    const errors = done.error_file_id ? await fileLines(client, done.error_file_id) : [];
    expect(errors).toHaveLength(done.request_counts!.failed);
    expect(errors.every((l) => l.error?.code === 'batch_expired')).toBe(true);
  });

  it('runs a fine-tuned model of the account on the gateway runner, not on Fireworks’ batch service', async () => {
    const created = await createBatch([chatLine('lora', `accounts/${ACCOUNT}/models/my-lora`)]);
    expect(created).toMatchObject({ gateway: { runner: 'gateway' } });
  });
});
