/**
 * Hosted (provider-mode) fine-tuning jobs through the official OpenAI SDK and plain HTTP: create →
 * the job monitor uploads, submits and follows the job at the fake OpenAI → succeeded; cancel at
 * every stage; provider errors; a provider that cannot be reached (retrying shown, then failed at
 * the deadline); files a pending job still needs; validation; tenancy; and the integration secret
 * never leaking.
 */
import { randomBytes } from 'node:crypto';
import { toFile } from 'openai';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { gatewayFetch } from '../support/answers';
import { api, createOrganisation } from '../support/gateway';
import {
  closedPort,
  createIntegration,
  createTestDatabase,
  databaseText,
  dataset,
  eventually,
  newKey,
  sdk,
  startHostedGateway,
  tempDir,
  type HostedGateway,
} from './harness';
import { expectError } from '../support/expect';

const SECRET = `sk-fake-${randomBytes(12).toString('hex')}`;
const WRONG_SECRET = `sk-wrong-${randomBytes(12).toString('hex')}`;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let fake: FakeOpenAI;
let gw: HostedGateway;
let data: { dir: string; remove(): Promise<void> };
const seen: string[] = []; // every response body the SDK received
const queries: string[] = [];
let client: ReturnType<typeof sdk>;
let trainingFileId: string;

/** How long a job that cannot reach its provider is retried here (GATEWAY_JOB_SUBMIT_DEADLINE_MS). */
const SUBMIT_DEADLINE_MS = 2000;

beforeAll(async () => {
  fake = await startFakeOpenAI({ apiKey: SECRET });
  data = await tempDir('gw-ft-');
  gw = await startHostedGateway({
    fake,
    database: await createTestDatabase(),
    dataDir: data.dir,
    key: newKey(),
    onQuery: (sql) => void queries.push(sql),
    // Together AI is configured at a closed port: every call to it is refused.
    env: { GATEWAY_TOGETHER_BASE_URL: `http://127.0.0.1:${await closedPort()}/v1`, GATEWAY_JOB_SUBMIT_DEADLINE_MS: String(SUBMIT_DEADLINE_MS) },
  });
  client = sdk(gw, seen);
  await createIntegration(gw, 'my-openai', SECRET);
  await createIntegration(gw, 'wrong-key', WRONG_SECRET);
  const together = await api(gw, 'POST', '/v1/integrations', {
    body: { slug: 'unreachable', provider: 'together-ai', name: 'unreachable', credentials: { api_key: 'tg-key-0123456789abcdef' } },
  });
  expect(together.status).toBe(200);
  const file = await client.files.create({ file: await toFile(Buffer.from(dataset()), 'train.jsonl'), purpose: 'fine-tune' });
  trainingFileId = file.id;
});

afterAll(async () => {
  await gw.stop();
  await gw.database.drop();
  await fake.close();
  await data.remove();
});

const GATEWAY_OPTIONS = { 'x-gateway-provider': '@my-openai' };

/** A hosted job through the SDK (gateway_options is the gateway's extension of OpenAI's body). */
function createJob(extra: Record<string, unknown> = {}) {
  return client.fineTuning.jobs.create({ model: 'gpt-4o-mini-2024-07-18', training_file: trainingFileId, gateway_options: GATEWAY_OPTIONS, ...extra } as any);
}

const waitForStatus = (id: string, statuses: string[]) =>
  eventually(async () => {
    const job = await client.fineTuning.jobs.retrieve(id);
    return statuses.includes(job.status) ? job : undefined;
  });

/** The fake's job carrying our id in its metadata (what the monitor submitted for it). */
const providerJobOf = (id: string) => [...fake.state.jobs.values()].filter((j) => j.metadata?.gateway_job_id === id);

describe('hosted fine-tuning jobs with the OpenAI SDK', () => {
  it('creates a job that the monitor uploads, submits and follows to succeeded', async () => {
    const created = await createJob({
      suffix: 'custom-suffix',
      seed: 7,
      method: { type: 'supervised', supervised: { hyperparameters: { n_epochs: 3, batch_size: 'auto' } } },
      metadata: { team: 'search' },
      provider_options: { model: 'gpt-4o-mini-provider-id' },
    });
    // Answered at once, in OpenAI's shape, before anything reached the provider.
    expect(created).toEqual({
      id: expect.stringMatching(UUID),
      object: 'fine_tuning.job',
      created_at: expect.any(Number),
      error: null,
      fine_tuned_model: null,
      finished_at: null,
      hyperparameters: { n_epochs: 3, batch_size: 'auto', learning_rate_multiplier: 'auto' },
      model: 'gpt-4o-mini-2024-07-18',
      organization_id: expect.stringMatching(UUID),
      result_files: [],
      status: 'validating_files',
      trained_tokens: null,
      training_file: trainingFileId,
      validation_file: null,
      seed: 7,
      estimated_finish: null,
      method: { type: 'supervised', supervised: { hyperparameters: { n_epochs: 3, batch_size: 'auto', learning_rate_multiplier: 'auto' } } },
      suffix: 'custom-suffix',
      metadata: { team: 'search' },
      gateway_status: null, // the gateway's extension: nothing amiss
    });
    expect(Math.abs(created.created_at - Date.now() / 1000)).toBeLessThan(60);

    const done = await waitForStatus(created.id, ['succeeded', 'failed']);
    expect(done.status).toBe('succeeded');
    expect(done.fine_tuned_model).toMatch(/^ft:gpt-4o-mini-provider-id:custom-suffix:/);
    expect(done.trained_tokens).toBeGreaterThan(0);
    expect(done.finished_at).toEqual(expect.any(Number));
    expect(done.result_files).toHaveLength(1);
    expect(done.training_file).toBe(trainingFileId); // the gateway's id, not the provider's
    expect(done.hyperparameters).toEqual({ n_epochs: 3, batch_size: 'auto', learning_rate_multiplier: 'auto' });
    expect(done.method).toEqual({ type: 'supervised', supervised: { hyperparameters: done.hyperparameters } });

    // The provider got the dataset byte for byte, the overriding model id, the method, and our id in metadata.
    const [remote] = providerJobOf(created.id);
    expect(providerJobOf(created.id)).toHaveLength(1);
    expect(remote).toMatchObject({
      model: 'gpt-4o-mini-provider-id',
      suffix: 'custom-suffix',
      seed: 7,
      metadata: { team: 'search', gateway_job_id: created.id },
    });
    // Only the values chosen travel: "auto" is what the provider assumes for a value left out.
    expect(remote.method).toEqual({ type: 'supervised', supervised: { hyperparameters: { n_epochs: 3 } } });
    expect(fake.state.files.get(remote.training_file)!.content.toString()).toBe(dataset());

    const list = await client.fineTuning.jobs.list({ limit: 5 });
    expect(list.data.map((j) => j.id)).toContain(created.id);
    expect(list.data.find((j) => j.id === created.id)).toEqual(done);

    const events = await client.fineTuning.jobs.listEvents(created.id, { limit: 50 });
    expect(events.data.length).toBeGreaterThan(5);
    for (const event of events.data) {
      expect(event).toEqual({
        id: expect.stringMatching(UUID),
        object: 'fine_tuning.job.event',
        created_at: expect.any(Number),
        level: expect.stringMatching(/^(info|warn|error)$/),
        message: expect.any(String),
        type: expect.any(String),
        data: expect.anything(),
      });
    }
    const messages = events.data.map((e) => e.message);
    // Newest first, like OpenAI: the provider's completion message and our status change lead.
    expect(messages.slice(0, 3)).toEqual(expect.arrayContaining(['The job has successfully completed', 'Job status changed from running to succeeded']));
    expect(messages).toEqual(
      expect.arrayContaining([expect.stringMatching(/^Submitted to openai as ftjob-/), expect.stringMatching(/^Uploaded training file to openai as file-/)]),
    );
    expect(messages.at(-1)).toMatch(/^Created fine-tuning job/);
    // Provider events are copied once however often the job was polled.
    expect(messages.filter((m) => m === 'Fine-tuning job started')).toHaveLength(1);

    const page = await client.fineTuning.jobs.listEvents(created.id, { limit: 2 });
    expect(page.data).toEqual(events.data.slice(0, 2));
    const next = await client.fineTuning.jobs.listEvents(created.id, { limit: 2, after: page.data[1].id });
    expect(next.data).toEqual(events.data.slice(2, 4));

    const checkpoints = await client.fineTuning.jobs.checkpoints.list(created.id);
    expect(checkpoints.data.map((c) => c.step_number)).toEqual([30, 20, 10]);
    expect(checkpoints.data[0]).toEqual({
      id: expect.stringMatching(UUID),
      object: 'fine_tuning.job.checkpoint',
      created_at: expect.any(Number),
      fine_tuned_model_checkpoint: `${done.fine_tuned_model}:ckpt-step-30`,
      step_number: 30,
      fine_tuning_job_id: created.id,
      metrics: { step: 30, train_loss: expect.any(Number), train_mean_token_accuracy: expect.any(Number) },
    });
    const rawCheckpoints = await api(gw, 'GET', `/v1/fine_tuning/jobs/${created.id}/checkpoints?limit=2`);
    expect(rawCheckpoints.body).toMatchObject({ object: 'list', first_id: checkpoints.data[0].id, last_id: checkpoints.data[1].id, has_more: true });
  });

  it('cancels a submitted job at the provider too', async () => {
    const created = await createJob();
    // Submitted and recorded (the gateway knows the provider's job id).
    await eventually(async () => {
      const events = await client.fineTuning.jobs.listEvents(created.id, { limit: 50 });
      return events.data.some((e) => e.message.startsWith('Submitted to')) ? true : undefined;
    });
    const cancelled = await client.fineTuning.jobs.cancel(created.id);
    expect(cancelled).toMatchObject({ id: created.id, object: 'fine_tuning.job', status: 'cancelled', finished_at: expect.any(Number) });
    expect(providerJobOf(created.id)[0].status).toBe('cancelled');
    // It stays cancelled: the monitor no longer moves it.
    await new Promise((r) => setTimeout(r, 300));
    expect((await client.fineTuning.jobs.retrieve(created.id)).status).toBe('cancelled');
    const again = await api(gw, 'POST', `/v1/fine_tuning/jobs/${created.id}/cancel`);
    expectError(again, 400, { param: null, code: 'job_not_cancellable' });
    const messages = (await client.fineTuning.jobs.listEvents(created.id)).data.map((e) => e.message);
    expect(messages[0]).toBe('Job cancelled');
  });

  it('cancels a job before it reaches the provider: nothing is ever submitted', async () => {
    fake.delayNext('POST', '/v1/files', 400);
    const created = await createJob();
    const cancelled = await client.fineTuning.jobs.cancel(created.id);
    expect(cancelled.status).toBe('cancelled');
    await new Promise((r) => setTimeout(r, 800)); // the slow upload ends; the monitor must not submit
    expect(providerJobOf(created.id)).toHaveLength(0);
    expect((await client.fineTuning.jobs.retrieve(created.id)).status).toBe('cancelled');
  });

  it('cancels at the provider a job whose submission was in flight when cancelled', async () => {
    fake.delayNext('POST', '/v1/fine_tuning/jobs', 600);
    const before = fake.state.requests.length;
    const created = await createJob();
    await eventually(
      async () => (fake.state.requests.slice(before).some((r) => r.method === 'POST' && r.path === '/v1/fine_tuning/jobs') ? true : undefined),
      10_000,
      5,
    );
    const cancelled = await client.fineTuning.jobs.cancel(created.id);
    expect(cancelled.status).toBe('cancelled');
    const remote = await eventually(async () => providerJobOf(created.id).find((j) => j.status === 'cancelled'));
    expect(remote.status).toBe('cancelled');
    expect(providerJobOf(created.id)).toHaveLength(1);
    expect((await client.fineTuning.jobs.retrieve(created.id)).status).toBe('cancelled');
  });

  it('reports a provider refusal as a failed job with the provider error', async () => {
    fake.failNext('POST', '/v1/fine_tuning/jobs', 400, { message: 'Model gpt-nope is not available for fine-tuning' });
    const created = await createJob({ model: 'gpt-nope' });
    const done = await waitForStatus(created.id, ['failed', 'succeeded']);
    expect(done.status).toBe('failed');
    // The provider's message, named as the provider's.
    expect(done.error).toEqual({ code: 'provider_error', message: 'OpenAI: Model gpt-nope is not available for fine-tuning', param: null });
    const events = await client.fineTuning.jobs.listEvents(created.id);
    expect(events.data[0]).toMatchObject({ level: 'error', message: 'Job failed: OpenAI: Model gpt-nope is not available for fine-tuning' });
  });

  it('fails a job whose integration key the provider rejects, without revealing the key', async () => {
    const created = await createJob({ gateway_options: { 'x-gateway-provider': '@wrong-key' } });
    const done = await waitForStatus(created.id, ['failed', 'succeeded']);
    expect(done.status).toBe('failed');
    expect(done.error).toMatchObject({ code: 'invalid_api_key', message: expect.stringMatching(/^OpenAI: Incorrect API key provided/) });
    expect(JSON.stringify(done)).not.toContain(WRONG_SECRET);
  });

  it('retries a provider 429/500 later instead of failing, and still submits exactly once', async () => {
    const calls = fake.state.createJobCalls;
    fake.failNext('POST', '/v1/fine_tuning/jobs', 500);
    fake.failNext('GET', '/v1/fine_tuning/jobs/', 429, { times: 4 });
    const created = await createJob();
    const done = await waitForStatus(created.id, ['succeeded', 'failed']);
    expect(done.status).toBe('succeeded');
    expect(fake.state.createJobCalls).toBe(calls + 1);
    expect(providerJobOf(created.id)).toHaveLength(1);
    // Each failed step the monitor retries is a job event, recorded as it happened (not only a log
    // line); the HTTP client's own quick retries of idempotent calls come before, so there are fewer.
    const events = (await client.fineTuning.jobs.listEvents(created.id, { limit: 100 })).data;
    const retries = events.filter((e) => e.level === 'warn' && /^Provider call failed .*; retrying in \d+ s$/.test(e.message));
    expect(retries.length).toBeGreaterThanOrEqual(2);
    expect(retries.map((e) => (e.data as any).status)).toEqual(expect.arrayContaining([429, 502]));
    // And the provider calls, their failures included, are counted on /metrics.
    const metrics = (await api(gw, 'GET', '/metrics', { key: null })).body as string;
    expect(metrics).toMatch(/gateway_provider_calls_total\{provider="openai",operation="createJob",outcome="ok"\} [1-9]/);
    expect(metrics).toMatch(/gateway_provider_errors_total\{provider="openai",operation="getJob",status="429"\} [1-9]/);
    expect(metrics).toMatch(/gateway_fine_tuning_jobs\{status="succeeded"\} [1-9]/);
  });

  it('gives every job an integer seed from creation on, chosen at random when none is given', async () => {
    const [a, b] = await Promise.all([createJob(), createJob()]);
    for (const job of [a, b]) expect(Number.isInteger(job.seed)).toBe(true);
    expect(a.seed).not.toBe(b.seed);
    expect((await client.fineTuning.jobs.retrieve(a.id)).seed).toBe(a.seed);
    const viaGraphQL = await api(gw, 'POST', '/graphql', { body: { query: 'query($id: ID!) { fineTuningJob(id: $id) { seed } }', variables: { id: a.id } } });
    expect(viaGraphQL.body.data.fineTuningJob.seed).toBe(a.seed);
    const done = await waitForStatus(a.id, ['succeeded', 'failed']);
    expect(providerJobOf(a.id)[0].seed).toBe(a.seed);
    expect(done.seed).toBe(a.seed);
    await client.fineTuning.jobs.cancel(b.id).catch(() => undefined);
  });

  it("downloads a finished job's result files through the gateway, for its own tenant only", async () => {
    const created = await createJob();
    const done = await waitForStatus(created.id, ['succeeded', 'failed']);
    const [resultId] = done.result_files;
    const res = await gatewayFetch(`${gw.url}/v1/files/${resultId}/content`, { headers: { 'x-gateway-api-key': gw.key } });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(fake.state.files.get(resultId)!.content.toString());
    const sdkContent = await client.files.content(resultId);
    expect(await sdkContent.text()).toMatch(/^step,train_loss\n/);
    const other = await createOrganisation(gw, 'Result file reader');
    expect((await api(other, 'GET', `/v1/files/${resultId}/content`)).status).toBe(404);
    expect((await api(gw, 'GET', '/v1/files/file-not-a-result/content')).status).toBe(404);
  });

  it('keeps jobs working when their integration is updated: rotated credentials apply from the next step', async () => {
    await createIntegration(gw, 'rotate-me', WRONG_SECRET);
    await gw.gateway.monitor.stop();
    let created;
    try {
      created = await createJob({ gateway_options: { 'x-gateway-provider': '@rotate-me' } });
      const rotated = await api(gw, 'PATCH', '/v1/integrations/rotate-me', { body: { credentials: { api_key: SECRET } } });
      expect(rotated.status).toBe(200);
    } finally {
      gw.gateway.monitor.start();
    }
    const done = await waitForStatus(created.id, ['succeeded', 'failed']);
    expect(done.status).toBe('succeeded');
    expect(providerJobOf(created.id)).toHaveLength(1);
  });

  it('adopts the provider job of an interrupted submission instead of creating a second one', async () => {
    await gw.gateway.monitor.stop();
    try {
      const created = await createJob();
      // What a process that crashed right after the provider's answer leaves behind: a provider job
      // carrying our id, and a row that counted the attempt but never stored the provider's id.
      const upload = new FormData();
      upload.append('purpose', 'fine-tune');
      upload.append('file', new Blob([dataset()]), 'train.jsonl');
      const auth = { authorization: `Bearer ${SECRET}` };
      const file = await (await fetch(`${fake.url}/files`, { method: 'POST', headers: auth, body: upload })).json();
      const remote = await (
        await fetch(`${fake.url}/fine_tuning/jobs`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify({ model: created.model, training_file: file.id, metadata: { gateway_job_id: created.id } }),
        })
      ).json();
      await gw.gateway.services.db.prisma.fineTuningJob.update({
        where: { id: created.id },
        data: { providerTrainingFileId: file.id, submitAttempts: 1 },
      });
      const calls = fake.state.createJobCalls;
      gw.gateway.monitor.start();
      const done = await waitForStatus(created.id, ['succeeded', 'failed']);
      expect(done.status).toBe('succeeded');
      expect(fake.state.createJobCalls).toBe(calls);
      expect(done.fine_tuned_model).toContain(remote.id);
    } finally {
      gw.gateway.monitor.start();
    }
  });

  it('pages the job list newest first with has_more', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await createJob({ suffix: `page-${i}` })).id);
    const first = await api(gw, 'GET', '/v1/fine_tuning/jobs?limit=2');
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ object: 'list', data: [expect.objectContaining({ id: ids[2] }), expect.objectContaining({ id: ids[1] })], has_more: true });
    const second = await api(gw, 'GET', `/v1/fine_tuning/jobs?limit=2&after=${ids[1]}`);
    expect(second.body.data[0].id).toBe(ids[0]);
    // The SDK's auto-pagination walks every job.
    const all: string[] = [];
    for await (const job of client.fineTuning.jobs.list({ limit: 3 })) all.push(job.id);
    expect(all).toEqual(expect.arrayContaining(ids));
    expect(new Set(all).size).toBe(all.length);
    await Promise.all(ids.map((id) => waitForStatus(id, ['succeeded'])));
  });
});

describe('a provider that cannot be reached', () => {
  const uploadDataset = async () => (await client.files.create({ file: await toFile(Buffer.from(dataset()), 'train.jsonl'), purpose: 'fine-tune' })).id;
  const gql = (query: string, variables: Record<string, unknown>) => api(gw, 'POST', '/graphql', { body: { query, variables } });

  it('shows the job retrying and why, keeps the file it needs, then fails it at the deadline as provider_unreachable', async () => {
    const fileId = await uploadDataset();
    const created = await api(gw, 'POST', '/v1/fine_tuning/jobs', {
      body: { model: 'meta-llama/Meta-Llama-3.1-8B-Instruct-Reference', training_file: fileId, gateway_options: { 'x-gateway-provider': '@unreachable' } },
    });
    expect(created.body.gateway_status).toBeNull();
    const id: string = created.body.id;

    // While it retries, OpenAI's fields are unchanged and the extension says why.
    const retrying = await eventually(async () => {
      const res = await api(gw, 'GET', `/v1/fine_tuning/jobs/${id}`);
      return res.body.gateway_status ? res.body : undefined;
    });
    expect(retrying).toMatchObject({ status: 'validating_files', error: null });
    expect(retrying.gateway_status).toEqual({
      retrying: true,
      reason: 'provider_unreachable',
      attempts: expect.any(Number),
      next_attempt_at: expect.any(Number),
      fails_at: expect.any(Number),
      last_error: { code: 'provider_unreachable', message: 'Could not reach Together AI (ECONNREFUSED)', status: 502 },
    });
    const failsIn = retrying.gateway_status.fails_at - created.body.created_at;
    expect(failsIn).toBeGreaterThanOrEqual(SUBMIT_DEADLINE_MS / 1000 - 1);
    expect(failsIn).toBeLessThanOrEqual(SUBMIT_DEADLINE_MS / 1000 + 5);
    const viaGraphQL = await gql(
      'query($id: ID!) { fineTuningJob(id: $id) { status gatewayStatus { retrying reason attempts failsAt lastError { code status } } } }',
      {
        id,
      },
    );
    expect(viaGraphQL.body.data.fineTuningJob).toMatchObject({
      status: 'VALIDATING_FILES',
      gatewayStatus: { retrying: true, reason: 'PROVIDER_UNREACHABLE', failsAt: expect.any(String), lastError: { code: 'provider_unreachable', status: 502 } },
    });
    const listed = (await api(gw, 'GET', '/v1/fine_tuning/jobs?limit=100')).body.data.find((j: { id: string }) => j.id === id);
    expect(listed.gateway_status).toMatchObject({ retrying: true, reason: 'provider_unreachable' });

    // The dataset has not reached the provider: deleting it now is refused on both faces.
    const refused = await api(gw, 'DELETE', `/v1/files/${fileId}`);
    expectError(refused, 409, { param: 'id', code: 'file_in_use' });
    expect(refused.body.error.message).toContain(id);
    const refusedGraphQL = await gql('mutation($id: ID!) { deleteFile(id: $id) }', { id: fileId });
    expect(refusedGraphQL.body.errors[0].extensions).toMatchObject({ code: 'CONFLICT', errorCode: 'file_in_use' });

    const failed = (await eventually(async () => {
      const res = await api(gw, 'GET', `/v1/fine_tuning/jobs/${id}`);
      return res.body.status === 'failed' ? res.body : undefined;
    })) as Record<string, any>;
    expect(failed.error).toEqual({
      code: 'provider_unreachable',
      message: expect.stringMatching(
        /^Together AI could not be reached to submit the job \(\d+ attempts over 2 s; the last one: Could not reach Together AI \(ECONNREFUSED\)\)$/,
      ),
      param: null,
    });
    expect(failed.gateway_status).toBeNull();
    // Within the deadline (and the one attempt made at it), not after the back-off of a long outage.
    expect(failed.finished_at - failed.created_at).toBeLessThanOrEqual(SUBMIT_DEADLINE_MS / 1000 + 5);
    const events = (await api(gw, 'GET', `/v1/fine_tuning/jobs/${id}/events?limit=100`)).body.data;
    expect(events[0]).toMatchObject({
      level: 'error',
      message: `Job failed: ${failed.error.message}`,
      data: { status: 'failed', previous_status: 'validating_files' },
    });
    expect(events.filter((e: { level: string }) => e.level === 'warn').map((e: { data: unknown }) => e.data)).toContainEqual(
      expect.objectContaining({ reason: 'provider_unreachable', code: 'provider_unreachable', status: 502 }),
    );
    // Nothing needs the file any more.
    expect((await api(gw, 'DELETE', `/v1/files/${fileId}`)).status).toBe(200);
  }, 30_000);

  it("names the field of a job's error in each face's spelling: training_file on REST, trainingFile on GraphQL", async () => {
    // The monitor is held so the file can go before it is uploaded (only a file removed underneath
    // the API, say from the database, can: the API refuses with file_in_use).
    await gw.gateway.monitor.stop();
    const fileId = await uploadDataset();
    const job = await createJob({ training_file: fileId });
    await gw.gateway.services.db.prisma.file.delete({ where: { id: fileId } });
    gw.gateway.monitor.start();
    const failed = await waitForStatus(job.id, ['failed']);
    expect(failed.error).toMatchObject({ code: 'not_found', param: 'training_file' });
    const viaGraphQL = await gql('query($id: ID!) { fineTuningJob(id: $id) { error { code param } } }', { id: job.id });
    expect(viaGraphQL.body.data.fineTuningJob.error).toEqual({ code: 'not_found', param: 'trainingFile' });
  });

  it('lets a file go once its job has uploaded it to the provider', async () => {
    const fileId = await uploadDataset();
    const job = await createJob({ training_file: fileId });
    await eventually(async () => {
      const events = await client.fineTuning.jobs.listEvents(job.id, { limit: 50 });
      return events.data.some((e) => e.message.startsWith('Uploaded training file')) ? true : undefined;
    });
    expect(await client.files.delete(fileId)).toEqual({ id: fileId, object: 'file', deleted: true });
    expect((await waitForStatus(job.id, ['succeeded', 'failed'])).status).toBe('succeeded');
  });
});

describe('create validation', () => {
  const base = () => ({ model: 'gpt-4o-mini', training_file: trainingFileId, gateway_options: GATEWAY_OPTIONS });
  const post = (body: unknown, headers?: Record<string, string>) => api(gw, 'POST', '/v1/fine_tuning/jobs', { body, headers });

  it.each([
    ['missing model', { model: undefined }, 'model'],
    ['missing training_file', { training_file: undefined }, 'training_file'],
    ['an unknown field', { integrations: [] }, 'integrations'],
    ['a camelCase field', { trainingFile: 'x' }, 'trainingFile'],
    ['an empty suffix', { suffix: '' }, 'suffix'],
    ['a suffix over 64 characters', { suffix: 'x'.repeat(65) }, 'suffix'],
    ['a fractional seed', { seed: 1.5 }, 'seed'],
    ['an unknown method type', { method: { type: 'sft' } }, 'method.type'],
    [
      'n_epochs out of range',
      { method: { type: 'supervised', supervised: { hyperparameters: { n_epochs: 0 } } } },
      'method.supervised.hyperparameters.n_epochs',
    ],
    [
      'an unknown hyperparameter',
      { method: { type: 'supervised', supervised: { hyperparameters: { epochs: 2 } } } },
      'method.supervised.hyperparameters.epochs',
    ],
    ['dpo settings on a supervised method', { method: { type: 'supervised', dpo: {} } }, 'method.dpo'],
    ['method and legacy hyperparameters', { method: { type: 'supervised' }, hyperparameters: { n_epochs: 2 } }, 'hyperparameters'],
    ['17 metadata pairs', { metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])) }, 'metadata'],
    ['a non-string metadata value', { metadata: { a: 1 } }, 'metadata.a'],
    ['no gateway_options', { gateway_options: undefined }, 'gateway_options'],
    ['a bare provider name', { gateway_options: { 'x-gateway-provider': 'openai' } }, 'gateway_options.x-gateway-provider'],
    [
      'a credential in gateway_options',
      { gateway_options: { ...GATEWAY_OPTIONS, 'x-gateway-aws-secret-access-key': 'abc' } },
      'gateway_options.x-gateway-aws-secret-access-key',
    ],
    ['an unknown gateway option', { gateway_options: { ...GATEWAY_OPTIONS, 'x-gateway-foo': 'abc' } }, 'gateway_options.x-gateway-foo'],
    ['an unknown provider option', { provider_options: { region: 'x' } }, 'provider_options.region'],
    ['a non-string training_file', { training_file: 42 }, 'training_file'],
  ])('refuses %s with 400 naming the field', async (_name, change, param) => {
    const res = await post({ ...base(), ...change });
    expectError(res, 400, { param });
    expect(res.body.error.type).toBe('invalid_request_error');
  });

  it('answers 404 for an unknown training file or integration, 400 for a file of another purpose', async () => {
    expectError(await post({ ...base(), training_file: '3f9a1c52-8d0e-4b7a-9c61-2a5e8f7d4b10' }), 404, { param: 'training_file' });
    expectError(await post({ ...base(), training_file: 'file-abc' }), 404, { param: 'training_file' });
    expectError(await post({ ...base(), validation_file: '3f9a1c52-8d0e-4b7a-9c61-2a5e8f7d4b10' }), 404, { param: 'validation_file' });
    expectError(await post({ ...base(), gateway_options: { 'x-gateway-provider': '@nope' } }), 404, { param: 'gateway_options.x-gateway-provider' });
    const other = await client.files.create({ file: await toFile(Buffer.from('{"custom_id": "1"}\n'), 'notes.jsonl'), purpose: 'user_data' });
    expectError(await post({ ...base(), training_file: other.id }), 400, { param: 'training_file', code: 'invalid_file_purpose' });
  });

  it('takes a request with an x-gateway-provider header as client mode, never as a hosted job', async () => {
    const headers = { 'x-gateway-provider': '@no-such-integration', authorization: `Bearer ${SECRET}` };
    expectError(await post(base(), headers), 400, { param: 'gateway_options' });
    const { gateway_options: _hosted, ...clientBody } = base();
    expectError(await post(clientBody, headers), 404, { param: 'x-gateway-provider' });
    expectError(await api(gw, 'GET', '/v1/fine_tuning/jobs', { headers }), 404, { param: 'x-gateway-provider' });
  });

  it('validates paging parameters', async () => {
    expectError(await api(gw, 'GET', '/v1/fine_tuning/jobs?limit=0'), 400, { param: 'limit' });
    expectError(await api(gw, 'GET', '/v1/fine_tuning/jobs?limit=101'), 400, { param: 'limit' });
    expectError(await api(gw, 'GET', '/v1/fine_tuning/jobs?limit=abc'), 400, { param: 'limit' });
    expectError(await api(gw, 'GET', '/v1/fine_tuning/jobs?after=3f9a1c52-8d0e-4b7a-9c61-2a5e8f7d4b10'), 400, { param: 'after', code: 'invalid_cursor' });
    expectError(await api(gw, 'GET', '/v1/fine_tuning/jobs?order=asc'), 400, { param: 'order' });
    const job = (await post(base())).body;
    expectError(await api(gw, 'GET', `/v1/fine_tuning/jobs/${job.id}/events?limit=0`), 400, { param: 'limit' });
    expectError(await api(gw, 'GET', `/v1/fine_tuning/jobs/${job.id}/checkpoints?after=nope`), 400, { param: 'after' });
    expectError(await api(gw, 'POST', `/v1/fine_tuning/jobs/${job.id}/cancel`, { body: { reason: 'x' } }), 400, { param: 'reason' });
    await api(gw, 'POST', `/v1/fine_tuning/jobs/${job.id}/cancel`);
  });
});

describe('tenancy', () => {
  it("answers 404 for another organisation's job on every route, and lists only its own", async () => {
    const job = (await createJob()).id;
    const other = await createOrganisation(gw);
    for (const [method, path] of [
      ['GET', `/v1/fine_tuning/jobs/${job}`],
      ['POST', `/v1/fine_tuning/jobs/${job}/cancel`],
      ['GET', `/v1/fine_tuning/jobs/${job}/events`],
      ['GET', `/v1/fine_tuning/jobs/${job}/checkpoints`],
    ]) {
      expectError(await api(other, method, path), 404, { code: 'not_found' });
    }
    const list = await api(other, 'GET', '/v1/fine_tuning/jobs');
    expect(list.body).toEqual({ object: 'list', data: [], has_more: false });
    // Its own integrations and files only: ours are unknown there.
    const res = await api(other, 'POST', '/v1/fine_tuning/jobs', { body: { model: 'm', training_file: trainingFileId, gateway_options: GATEWAY_OPTIONS } });
    expectError(res, 404, { param: 'training_file' });
    await waitForStatus(job, ['succeeded']);
  });
});

describe('GraphQL', () => {
  const gql = (query: string, variables: Record<string, unknown> = {}) => api(gw, 'POST', '/graphql', { body: { query, variables } });

  it('creates, reads (with file, events and checkpoints batched) and cancels jobs', async () => {
    const created = await gql(
      `mutation($input: CreateFineTuningJobInput!) { createFineTuningJob(input: $input) { id status model integration provider method { type hyperparameters { nEpochs batchSize } } trainingFile { id filename purpose } } }`,
      {
        input: {
          model: 'gpt-4o-mini',
          trainingFile: trainingFileId,
          integration: '@my-openai',
          method: { type: 'DPO', hyperparameters: { nEpochs: 2 } },
          metadata: { via: 'graphql' },
        },
      },
    );
    expect(created.body.errors).toBeUndefined();
    const job = created.body.data.createFineTuningJob;
    expect(job).toEqual({
      id: expect.stringMatching(UUID),
      status: 'VALIDATING_FILES',
      model: 'gpt-4o-mini',
      integration: '@my-openai',
      provider: 'openai',
      method: { type: 'DPO', hyperparameters: { nEpochs: 2, batchSize: null } },
      trainingFile: { id: trainingFileId, filename: 'train.jsonl', purpose: 'FINE_TUNE' },
    });
    await waitForStatus(job.id, ['succeeded']);

    queries.length = 0;
    const read = await gql(
      `{ fineTuningJobs(limit: 5) { hasMore items { id status fineTunedModel trainingFile { id } events(limit: 3) { message level } checkpoints { stepNumber fineTuningJobId } } } }`,
    );
    expect(read.body.errors).toBeUndefined();
    const items = read.body.data.fineTuningJobs.items;
    expect(items).toHaveLength(5);
    expect(read.body.data.fineTuningJobs.hasMore).toBe(true);
    const mine = items.find((j: any) => j.id === job.id);
    expect(mine).toMatchObject({ status: 'SUCCEEDED', fineTunedModel: expect.stringMatching(/^ft:/), trainingFile: { id: trainingFileId } });
    expect(mine.events).toHaveLength(3);
    expect(mine.checkpoints.map((c: any) => c.stepNumber)).toEqual([30, 20, 10]);
    expect(mine.checkpoints[0].fineTuningJobId).toBe(job.id);
    // One query for the events and one for the checkpoints of all five jobs (DataLoader batches).
    expect(queries.filter((q) => q.includes('fine_tuning_job_events') && q.includes('row_number')).length).toBe(1);
    expect(queries.filter((q) => q.includes('fine_tuning_job_checkpoints') && q.includes('row_number')).length).toBe(1);
    expect(queries.filter((q) => /FROM "public"\."files"/.test(q)).length).toBe(1);

    const one = await gql(`query($id: ID!) { fineTuningJob(id: $id) { id status hyperparameters { nEpochs } } }`, { id: job.id });
    expect(one.body.data.fineTuningJob).toMatchObject({ id: job.id, status: 'SUCCEEDED' });

    const fresh = (await createJob()).id;
    const cancelled = await gql(`mutation($id: ID!) { cancelFineTuningJob(id: $id) { id status } }`, { id: fresh });
    expect(cancelled.body.data.cancelFineTuningJob).toEqual({ id: fresh, status: 'CANCELLED' });
    const again = await gql(`mutation($id: ID!) { cancelFineTuningJob(id: $id) { id } }`, { id: fresh });
    expect(again.body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    const missing = await gql(`{ fineTuningJob(id: "3f9a1c52-8d0e-4b7a-9c61-2a5e8f7d4b10") { id } }`);
    expect(missing.body.errors[0].extensions.code).toBe('NOT_FOUND');
    const invalid = await gql(`mutation { createFineTuningJob(input: {model: "m", trainingFile: "${trainingFileId}"}) { id } }`);
    expect(invalid.body.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', param: 'gatewayOptions' });
  });
});

describe('the integration secret', () => {
  it('never appears in a response, a log line or the database', async () => {
    // Everything above ran with it; the last check runs once the rest of the file has.
    expect(seen.length).toBeGreaterThan(20);
    for (const body of seen) expect(body).not.toContain(SECRET);
    expect(gw.logs.length).toBeGreaterThan(20);
    expect(gw.logs.some((l) => l.includes('fine-tuning job submitted'))).toBe(true);
    for (const secret of [SECRET, WRONG_SECRET]) {
      expect(gw.logs.join('\n')).not.toContain(secret);
      expect(await databaseText(gw)).not.toContain(secret);
    }
    // The fake did receive it: it was really used.
    expect(fake.state.requests.some((r) => r.headers.authorization === `Bearer ${SECRET}`)).toBe(true);
  });
});
