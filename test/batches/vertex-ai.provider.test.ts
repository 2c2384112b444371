/**
 * Batches on Vertex AI's own batch service (the provider runner), end to end with the `openai` SDK
 * against the fake Google Cloud: the requests go to Cloud Storage as GenerateContentRequest lines, one
 * batchPredictionJob runs them (a Google model under its publisher, a tuned model by its model
 * resource), and every predictions file is read back into OpenAI's output file, joined on `custom_id`.
 */
import { startFakeVertex, type FakeVertex } from '../fakes/vertex-server';
import { api, startTestGateway, type TestGateway } from '../support/gateway';
import { BUCKET, fakeEndpoints, tunedOnFake } from '../providers/vertex-ai.support';
import { eventually, sdk } from '../fine-tuning/harness';
import { chatLine, fileLines, finished, jsonl, uploadBatchFile } from './harness';

let fake: FakeVertex;
let gw: TestGateway;
let client: ReturnType<typeof sdk>;

beforeAll(async () => {
  fake = await startFakeVertex();
  gw = await startTestGateway({ ...fakeEndpoints(fake), GATEWAY_BATCH_POLL_MS: '50' });
  client = sdk(gw);
  const options = { 'x-gateway-vertex-project-id': fake.projectId, 'x-gateway-vertex-region': fake.location, 'x-gateway-vertex-storage-bucket-name': BUCKET };
  const credentials = { service_account_json: JSON.stringify(fake.serviceAccount) };
  const res = await api(gw, 'POST', '/v1/integrations', { body: { slug: 'my-vertex', provider: 'vertex-ai', credentials, options } });
  if (res.status !== 200) throw new Error(`integration not created: ${JSON.stringify(res.body)}`);
});

afterAll(async () => {
  await gw.stop();
  await fake.close();
});

const viaVertex = { 'x-gateway-provider': '@my-vertex' };

async function createBatch(lines: unknown[], options: Record<string, string> = {}) {
  const file = await uploadBatchFile(client, jsonl(lines));
  const body = { input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h', gateway_options: { ...viaVertex, ...options } };
  return client.batches.create(body as never);
}

/** The fake's job for a gateway batch (by the label the adapter sets). */
const jobOf = (batchId: string) => eventually(async () => [...fake.batch.jobs.values()].find((j) => j.labels?.gateway_batch === batchId));

describe('batches on Vertex AI batch prediction', () => {
  it('runs a Google model: Gemini lines in GCS, one job, every result in the output file with usage and custom_id', async () => {
    const lines = ['q-1', 'q-2', 'q-3'].map((id) => chatLine(id, 'gemini-2.5-flash', `Question ${id}`, { max_tokens: 40, temperature: 0.2 }));
    const created = await createBatch(lines);
    expect(created).toMatchObject({ status: 'validating', gateway: { runner: 'provider', provider: 'vertex-ai' } });

    const done = await finished(client, created.id);
    expect(done).toMatchObject({ status: 'completed', request_counts: { total: 3, completed: 3, failed: 0 } });
    expect(done.error_file_id ?? null).toBeNull();
    const job = await jobOf(created.id);
    expect(job).toMatchObject({
      model: 'publishers/google/models/gemini-2.5-flash',
      state: 'JOB_STATE_SUCCEEDED',
      instanceConfig: { excludedFields: ['custom_id'] },
    });
    const input = fake.state.storage.buckets.get(BUCKET)!.get(`gateway-batches/${created.id}/input.jsonl`)!;
    const first = JSON.parse(input.data.toString('utf8').split('\n')[0]);
    expect(first).toEqual({
      custom_id: 'q-1',
      request: { contents: [{ role: 'user', parts: [{ text: 'Question q-1' }] }], generationConfig: { maxOutputTokens: 40, temperature: 0.2 } },
    });

    const output = await fileLines(client, done.output_file_id!);
    expect(output.map((l) => l.custom_id).sort()).toEqual(['q-1', 'q-2', 'q-3']);
    for (const line of output) {
      expect(line).toMatchObject({
        response: { status_code: 200, body: { object: 'chat.completion', choices: [{ message: { role: 'assistant', content: expect.any(String) } }] } },
        error: null,
      });
      expect(line.response.body.usage.total_tokens).toBeGreaterThan(0);
    }
    expect(done.usage?.input_tokens).toBe(output.reduce((sum, l) => sum + l.response.body.usage.prompt_tokens, 0));
    // One job, submitted once.
    expect([...fake.batch.jobs.values()].filter((j) => j.labels?.gateway_batch === created.id)).toHaveLength(1);
  });

  it('runs a tuned model by its projects/…/models/… name on the regional host', async () => {
    const tunedModel = await tunedOnFake(fake);

    const created = await createBatch([chatLine('t-1', tunedModel)], { 'x-gateway-batch-runner': 'provider' });
    const done = await finished(client, created.id);
    expect(done).toMatchObject({ status: 'completed', request_counts: { total: 1, completed: 1, failed: 0 } });
    expect((await jobOf(created.id)).model).toBe(tunedModel);
    const [line] = await fileLines(client, done.output_file_id!);
    expect(line).toMatchObject({ custom_id: 't-1', response: { status_code: 200, body: { object: 'chat.completion' } } });
  });

  it('refuses the provider runner for a tuned model’s endpoint, naming the runner option', async () => {
    const endpoint = `projects/${fake.projectNumber}/locations/${fake.location}/endpoints/123`;
    await expect(createBatch([chatLine('e-1', endpoint)], { 'x-gateway-batch-runner': 'provider' })).rejects.toMatchObject({
      status: 400,
      param: 'gateway_options.x-gateway-batch-runner',
    });
  });

  it('cancels: Vertex is asked to cancel, the rows it finished are published, the rest fail as cancelled', async () => {
    fake.settings.stepsPerPoll = 0;
    try {
      const created = await createBatch(['c-1', 'c-2', 'c-3'].map((id) => chatLine(id, 'gemini-2.5-flash')));
      const job = await jobOf(created.id);
      fake.settings.batchRowsPerStep = 1;
      fake.batch.advance(job.name, 2);
      await client.batches.cancel(created.id);
      await eventually(async () => (fake.batch.jobs.get(job.name.split('/').pop()!)!.state === 'JOB_STATE_CANCELLING' ? true : undefined));
      fake.batch.advance(job.name);
      const done = await finished(client, created.id);
      expect(done).toMatchObject({ status: 'cancelled', request_counts: { total: 3, completed: 1, failed: 2 } });
      expect((await fileLines(client, done.output_file_id!)).map((l) => l.custom_id)).toEqual(['c-1']);
      const errors = await fileLines(client, done.error_file_id!);
      expect(errors.map((l) => [l.custom_id, l.error?.code]).sort()).toEqual([
        ['c-2', 'batch_cancelled'],
        ['c-3', 'batch_cancelled'],
      ]);
    } finally {
      fake.settings.stepsPerPoll = 1;
      fake.settings.batchRowsPerStep = Infinity;
    }
  });
});

describe('a gateway-runner batch line on Vertex AI', () => {
  it('carries the known fields to generateContent, not as fields the gateway does not know', async () => {
    const body = { max_tokens: 40, temperature: 0.3, top_p: 0.9, stop: ['END'], seed: 7, presence_penalty: 0.5 };
    const created = await createBatch([chatLine('g-1', 'gemini-2.5-flash', 'Gateway-run question', body)], { 'x-gateway-batch-runner': 'gateway' });
    expect(await finished(client, created.id)).toMatchObject({ status: 'completed', request_counts: { total: 1, completed: 1, failed: 0 } });
    const call = fake.state.generateRequests.find((r) => JSON.stringify(r.body).includes('Gateway-run question'));
    expect(call?.body).toMatchObject({
      generationConfig: { maxOutputTokens: 40, temperature: 0.3, topP: 0.9, stopSequences: ['END'], seed: 7, presencePenalty: 0.5 },
    });
  });
});
