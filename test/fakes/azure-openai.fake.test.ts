/**
 * Proves the fake Azure OpenAI faithful by driving it with the official `openai` package's
 * `AzureOpenAI` client, as a real resource would be driven: files, fine-tuning, chat on a deployment,
 * Entra tokens, and the failures Azure answers (api-version, keys, deployments, unprocessed files).
 */
import { AzureOpenAI, toFile } from 'openai';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { AZURE_TEST_API_KEY, AZURE_TEST_ENTRA_TOKEN, AZURE_TEST_RESOURCE, startFakeAzureOpenAI, type FakeAzureOpenAI } from './azure-openai-server';
import { apiError, eventually } from '../support/expect';

const MODEL = 'gpt-4o-mini-2024-07-18';
const line = (n: number) =>
  JSON.stringify({
    messages: [
      { role: 'user', content: `Question ${n}` },
      { role: 'assistant', content: `Answer ${n}` },
    ],
  });
const DATASET = Buffer.from([1, 2, 3].map(line).join('\n') + '\n');

let fake: FakeAzureOpenAI;
let client: AzureOpenAI;

const azure = (options: { apiVersion?: string; endpoint?: string; apiKey?: string; maxRetries?: number } = {}) =>
  new AzureOpenAI({ endpoint: fake.endpoint(), apiKey: AZURE_TEST_API_KEY, apiVersion: '2024-10-21', maxRetries: 0, ...options });

beforeEach(async () => {
  fake = await startFakeAzureOpenAI({ resources: [AZURE_TEST_RESOURCE, 'other-aoai'] });
  client = azure();
});

afterEach(() => fake.close());

/** Uploads a dataset and polls it until processing ended, as a client must before creating a job. */
async function uploadProcessed(content = DATASET, c = client) {
  const uploaded = await c.files.create({ file: await toFile(content, 'train.jsonl'), purpose: 'fine-tune' });
  return c.files.retrieve(uploaded.id);
}

describe('fake Azure OpenAI, files', () => {
  it('takes an upload as 201 pending with a Location, then serves it processed, listed, as bytes, and deletes it', async () => {
    const { data: uploaded, response } = await client.files.create({ file: await toFile(DATASET, 'train.jsonl'), purpose: 'fine-tune' }).withResponse();

    expect(response.status).toBe(201);
    expect(response.headers.get('location')).toBe(`${fake.url()}/files/${uploaded.id}`);
    // Pending: no size yet, as in Azure's example.
    expect(uploaded).toEqual({
      id: expect.stringMatching(/^file-[0-9a-f]{32}$/),
      object: 'file',
      status: 'pending',
      purpose: 'fine-tune',
      filename: 'train.jsonl',
      created_at: expect.any(Number),
    });
    expect(fake.state.files.get(uploaded.id)!.content.equals(DATASET)).toBe(true);

    const processed = await client.files.retrieve(uploaded.id);
    expect(processed).toMatchObject({ id: uploaded.id, status: 'processed', bytes: DATASET.length });

    const listed = await client.files.list();
    expect(listed.data.map((f) => f.id)).toEqual([uploaded.id]);
    expect((await client.files.list({ purpose: 'fine-tune-results' })).data).toEqual([]);

    const content = await client.files.content(uploaded.id);
    expect(Buffer.from(await content.arrayBuffer()).equals(DATASET)).toBe(true);

    expect(await client.files.delete(uploaded.id)).toEqual({ object: 'file', deleted: true, id: uploaded.id });
    const gone = await apiError(client.files.retrieve(uploaded.id));
    expect(gone.status).toBe(404);
    expect(gone.code).toBe('notFound');
  });

  it('ends processing of a dataset that is not chat JSONL in error, naming the line', async () => {
    const bad = Buffer.from(`${line(1)}\n{"prompt": "old format"}\n`);
    const file = await uploadProcessed(bad);

    expect(file.status).toBe('error');
    expect(file.status_details).toMatch(/Line 2: missing a non-empty 'messages' array/);
    const refused = await apiError(client.fineTuning.jobs.create({ model: MODEL, training_file: file.id }));
    expect(refused.status).toBe(400);
    expect(refused.code).toBe('jsonlValidationFailed');
  });

  it("keeps each resource's files apart, and serves the first resource on plain /openai paths", async () => {
    const file = await uploadProcessed();

    const other = azure({ endpoint: fake.endpoint('other-aoai') });
    expect((await apiError(other.files.retrieve(file.id))).status).toBe(404);
    expect((await other.files.list()).data).toEqual([]);

    const plain = azure({ endpoint: fake.origin });
    expect((await plain.files.retrieve(file.id)).id).toBe(file.id);
  });

  it('refuses an upload without a purpose as invalidPayload', async () => {
    const form = new FormData();
    form.append('file', new Blob([DATASET]), 'train.jsonl');
    const res = await fetch(`${fake.url()}/files?api-version=2024-10-21`, { method: 'POST', body: form, headers: { 'api-key': AZURE_TEST_API_KEY } });

    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: { code: 'invalidPayload', message: "The 'purpose' field is required." } });
    expect(fake.state.files.size).toBe(0);
  });
});

describe('fake Azure OpenAI, fine-tuning', () => {
  it('creates a job as 201 pending and drives it to succeeded with results, events and checkpoints', async () => {
    const file = await uploadProcessed();
    const { data: created, response } = await client.fineTuning.jobs
      .create({ model: MODEL, training_file: file.id, suffix: 'pirate', hyperparameters: { n_epochs: 2 } })
      .withResponse();

    expect(response.status).toBe(201);
    expect(response.headers.get('location')).toBe(`${fake.url()}/fine_tuning/jobs/${created.id}`);
    expect(created).toMatchObject({ id: expect.stringMatching(/^ftjob-[0-9a-f]{32}$/), object: 'fine_tuning.job', status: 'pending', model: MODEL });
    expect(created.hyperparameters).toEqual({ n_epochs: 2, batch_size: -1, learning_rate_multiplier: -1 });
    // Azure leaves absent fields out instead of sending null.
    expect(created).not.toHaveProperty('fine_tuned_model');
    expect(created).not.toHaveProperty('finished_at');

    const list = await client.fineTuning.jobs.list();
    expect(list.data.map((j) => j.id)).toEqual([created.id]);
    expect(list.has_more).toBe(false);

    expect((await client.fineTuning.jobs.retrieve(created.id)).status).toBe('running');
    const done = await client.fineTuning.jobs.retrieve(created.id);
    const hex = created.id.replace('ftjob-', '');
    expect(done).toMatchObject({
      status: 'succeeded',
      fine_tuned_model: `${MODEL}.ft-${hex}-pirate`,
      finished_at: expect.any(Number),
      trained_tokens: expect.any(Number),
    });
    expect(done.result_files).toHaveLength(1);
    const results = await (await client.files.content(done.result_files[0])).text();
    expect(results.split('\n')[0]).toBe('step,train_loss,train_mean_token_accuracy,valid_loss,valid_mean_token_accuracy');

    const events = await client.fineTuning.jobs.listEvents(created.id);
    expect(events.data[0].message).toBe('Job succeeded.');
    expect(events.data.at(-1)!.message).toBe('Job enqueued. Waiting for jobs ahead to complete.');
    expect(events.data.every((e) => /^ftevent-[0-9a-f]{32}$/.test(e.id))).toBe(true);
    expect(events.data.some((e) => e.type === 'metrics')).toBe(true);

    const checkpoints = await client.fineTuning.jobs.checkpoints.list(created.id, { limit: 2 });
    expect(checkpoints.data.map((c) => c.step_number)).toEqual([30, 20]);
    expect(checkpoints.has_more).toBe(true);
    expect(checkpoints.data[0]).toMatchObject({ fine_tuned_model_checkpoint: `${done.fine_tuned_model}:ckpt-step-30`, metrics: { step: 30, train_loss: 0.4 } });
    const rest = await checkpoints.getNextPage();
    expect(rest.data.map((c) => c.step_number)).toEqual([10]);
    expect(rest.has_more).toBe(false);
  });

  it('pages jobs with after and limit, newest first', async () => {
    const file = await uploadProcessed();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await client.fineTuning.jobs.create({ model: MODEL, training_file: file.id })).id);

    const first = await client.fineTuning.jobs.list({ limit: 2 });
    expect(first.data.map((j) => j.id)).toEqual([ids[2], ids[1]]);
    expect(first.has_more).toBe(true);
    const second = await client.fineTuning.jobs.list({ limit: 2, after: ids[1] });
    expect(second.data.map((j) => j.id)).toEqual([ids[0]]);
    expect(second.has_more).toBe(false);
  });

  it('cancels a running job, refuses to cancel it twice, and deletes it with 204', async () => {
    const file = await uploadProcessed();
    const job = await client.fineTuning.jobs.create({ model: MODEL, training_file: file.id });
    await client.fineTuning.jobs.retrieve(job.id); // running

    const cancelled = await client.fineTuning.jobs.cancel(job.id);
    expect(cancelled).toMatchObject({ id: job.id, status: 'cancelled', finished_at: expect.any(Number) });
    expect((await client.fineTuning.jobs.retrieve(job.id)).status).toBe('cancelled');
    const again = await apiError(client.fineTuning.jobs.cancel(job.id));
    expect(again.status).toBe(400);

    const { response } = await client.delete(`/fine_tuning/jobs/${job.id}`).withResponse();
    expect(response.status).toBe(204);
    expect((await apiError(client.fineTuning.jobs.retrieve(job.id))).code).toBe('notFound');
  });

  it('ends a job failJob marked as failed, with its error', async () => {
    const file = await uploadProcessed();
    const job = await client.fineTuning.jobs.create({ model: MODEL, training_file: file.id });
    fake.failJob(job.id, { code: 'invalidTrainingData', message: 'Too few examples.', param: 'training_file' });

    const failed = await client.fineTuning.jobs.retrieve(job.id);
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'invalidTrainingData', message: 'Too few examples.', param: 'training_file' } });
    expect(failed).not.toHaveProperty('fine_tuned_model');
    const events = await client.fineTuning.jobs.listEvents(job.id);
    expect(events.data[0]).toMatchObject({ level: 'error', message: 'Job failed. Too few examples.' });
  });

  it('refuses a job on a file still pending, an unknown base model or a bad suffix as invalidPayload', async () => {
    const pending = await client.files.create({ file: await toFile(DATASET, 'train.jsonl'), purpose: 'fine-tune' });
    const notReady = await apiError(client.fineTuning.jobs.create({ model: MODEL, training_file: pending.id }));
    expect(notReady.status).toBe(400);
    expect(notReady.code).toBe('invalidPayload');
    expect(notReady.message).toMatch(/status is 'pending'/);

    const file = await client.files.retrieve(pending.id);
    const badModel = await apiError(client.fineTuning.jobs.create({ model: 'gpt-4o-mini', training_file: file.id }));
    expect(badModel.code).toBe('invalidPayload');
    const badSuffix = await apiError(client.fineTuning.jobs.create({ model: MODEL, training_file: file.id, suffix: 'no spaces allowed' }));
    expect(badSuffix.code).toBe('invalidPayload');
    expect(fake.state.jobs.size).toBe(0);
  });

  it('ignores method on 2024-10-21, and honours it from 2025-03-01-preview', async () => {
    const file = await uploadProcessed();
    const method = { type: 'supervised' as const, supervised: { hyperparameters: { n_epochs: 3 } } };

    const stable = await client.fineTuning.jobs.create({ model: MODEL, training_file: file.id, method });
    expect(stable.hyperparameters).toEqual({ n_epochs: -1, batch_size: -1, learning_rate_multiplier: -1 });
    expect(stable).not.toHaveProperty('method');

    const preview = await azure({ apiVersion: '2025-04-01-preview' }).fineTuning.jobs.create({ model: MODEL, training_file: file.id, method });
    expect(preview.hyperparameters).toEqual({ n_epochs: 3, batch_size: -1, learning_rate_multiplier: -1 });
    expect(preview.method).toEqual({ type: 'supervised', supervised: { hyperparameters: { n_epochs: 3, batch_size: -1, learning_rate_multiplier: -1 } } });
    expect(fake.state.jobRequests.map((r) => [r.apiVersion, r.body.method])).toEqual([
      ['2024-10-21', method],
      ['2025-04-01-preview', method],
    ]);
  });
});

describe('fake Azure OpenAI, chat on deployments', () => {
  const messages = [{ role: 'user' as const, content: 'Ahoy' }];

  it("answers a registered deployment with the deployed model, usage and Azure's filter results", async () => {
    fake.registerDeployment('pirate-bot', `${MODEL}.ft-abc`);
    const completion = await azure({}).chat.completions.create({ model: 'pirate-bot', messages });

    expect(completion.model).toBe(`${MODEL}.ft-abc`);
    expect(completion.choices[0].message.content).toBe(`Answer from ${MODEL}.ft-abc: Ahoy`);
    expect(completion.usage).toMatchObject({ prompt_tokens: expect.any(Number), completion_tokens: expect.any(Number), total_tokens: expect.any(Number) });
    expect(completion).toHaveProperty('prompt_filter_results');
    expect(fake.state.chatRequests).toEqual([
      expect.objectContaining({ resource: AZURE_TEST_RESOURCE, deployment: 'pirate-bot', apiVersion: '2024-10-21', body: { model: 'pirate-bot', messages } }),
    ]);
    expect(fake.state.chatRequests[0].headers['api-key']).toBe(AZURE_TEST_API_KEY);
  });

  it("streams chunk by chunk after Azure's choice-less opening chunk, with a usage chunk on request", async () => {
    fake.registerDeployment('pirate-bot', MODEL);
    const deployed = new AzureOpenAI({ endpoint: fake.endpoint(), apiKey: AZURE_TEST_API_KEY, apiVersion: '2024-10-21', deployment: 'pirate-bot' });
    const stream = await deployed.chat.completions.create({ model: 'ignored', messages, stream: true, stream_options: { include_usage: true } });
    const chunks: ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);

    expect(chunks[0].choices).toEqual([]);
    expect(chunks[0]).toHaveProperty('prompt_filter_results');
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
    expect(text).toBe(`Answer from ${MODEL}: Ahoy`);
    const withText = chunks.filter((c) => c.choices[0]?.delta.content);
    expect(withText.length).toBeGreaterThan(1);
    expect(withText[0].choices[0]).toHaveProperty('content_filter_results.hate', { filtered: false, severity: 'safe' });
    expect(chunks.at(-1)!.usage).toMatchObject({ total_tokens: expect.any(Number) });
    expect(fake.state.chatRequests[0].deployment).toBe('pirate-bot');
    expect(fake.state.abandonedStreams).toBe(0);
  });

  it('counts a stream the client abandoned midway', async () => {
    fake.registerDeployment('pirate-bot', MODEL);
    fake.setStreamDelay(30);
    const stream = await client.chat.completions.create({ model: 'pirate-bot', messages: [{ role: 'user', content: 'a long tale of the sea' }], stream: true });
    for await (const chunk of stream) {
      if (chunk.choices[0]?.delta.content) break; // leaving the loop aborts the request
    }

    await eventually(() => fake.state.abandonedStreams === 1, 2_000, 10);
  });

  it("answers an unknown deployment with DeploymentNotFound, and a bad body in OpenAI's words", async () => {
    const missing = await apiError(client.chat.completions.create({ model: 'nobody', messages }));
    expect(missing.status).toBe(404);
    expect(missing.code).toBe('DeploymentNotFound');

    fake.registerDeployment('pirate-bot', MODEL, 'other-aoai');
    expect((await apiError(client.chat.completions.create({ model: 'pirate-bot', messages }))).code).toBe('DeploymentNotFound');
    const other = azure({ endpoint: fake.endpoint('other-aoai') });
    const empty = await apiError(other.chat.completions.create({ model: 'pirate-bot', messages: [] }));
    expect(empty.status).toBe(400);
    expect(empty.error).toMatchObject({ code: 'empty_array', param: 'messages', type: 'invalid_request_error' });
    expect(fake.state.chatRequests).toEqual([]);
  });
});

describe('fake Azure OpenAI, auth, versions and throttling', () => {
  it('accepts an Entra token as Bearer, and refuses a wrong one with the token 401 body', async () => {
    const entra = (token: string) =>
      new AzureOpenAI({ endpoint: fake.endpoint(), azureADTokenProvider: async () => token, apiVersion: '2024-10-21', maxRetries: 0 });
    expect((await entra(AZURE_TEST_ENTRA_TOKEN).files.list()).data).toEqual([]);
    expect(fake.state.requests.at(-1)!.headers.authorization).toBe(`Bearer ${AZURE_TEST_ENTRA_TOKEN}`);

    expect((await apiError(entra('expired').files.list())).status).toBe(401);
    const res = await fetch(`${fake.url()}/files?api-version=2024-10-21`, { headers: { authorization: 'Bearer expired' } });
    expect(await res.json()).toEqual({ statusCode: 401, message: expect.stringMatching(/^Unauthorized. Access token is missing, invalid/) });
  });

  it("refuses a wrong or missing api-key with Azure's 401 bodies", async () => {
    const wrong = await apiError(azure({ apiKey: 'ffffffffffffffffffffffffffffffff' }).files.list());
    expect(wrong.status).toBe(401);
    expect(wrong.error).toEqual({ code: '401', message: expect.stringMatching(/^Access denied due to invalid subscription key/) });

    const res = await fetch(`${fake.url()}/files?api-version=2024-10-21`);
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: { code: '401', message: expect.stringMatching(/missing subscription key/) } });
  });

  it('answers a missing api-version with 404 and an unknown one with 400', async () => {
    const res = await fetch(`${fake.url()}/files`, { headers: { 'api-key': AZURE_TEST_API_KEY } });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: { code: '404', message: 'Resource not found' } });

    const unknown = await apiError(azure({ apiVersion: '2023-01-01' }).files.list());
    expect(unknown.status).toBe(400);
    expect(unknown.error).toEqual({ code: 'BadRequest', message: 'API version not supported' });
  });

  it('answers an unknown resource or path with 404 Resource not found', async () => {
    expect((await apiError(azure({ endpoint: fake.endpoint('no-such-resource') }).files.list())).code).toBe('404');
    expect((await apiError(client.embeddings.create({ model: 'text-embedding-3-small', input: 'x' }))).code).toBe('404');
  });

  it("throttles in Azure's shapes with retry-after, which the client honours", async () => {
    fake.failNext('GET', `/${AZURE_TEST_RESOURCE}/openai/files`, 429);
    const authoring = await apiError(client.files.list());
    expect(authoring.status).toBe(429);
    expect(authoring.code).toBe('tooManyRequests');
    expect(authoring.headers?.get('retry-after')).toBe('1');

    fake.registerDeployment('pirate-bot', MODEL);
    fake.failNext('POST', `/${AZURE_TEST_RESOURCE}/openai/deployments/`, 429, { retryAfter: '0' });
    const inference = await apiError(client.chat.completions.create({ model: 'pirate-bot', messages: [{ role: 'user', content: 'hi' }] }));
    expect(inference.code).toBe('429');
    expect(inference.message).toMatch(/API version 2024-10-21 have exceeded token rate limit/);

    fake.failNext('GET', `/${AZURE_TEST_RESOURCE}/openai/files`, 429, { retryAfter: '0' });
    await azure({ maxRetries: 1 }).files.list();
    expect(fake.state.requests.filter((r) => r.method === 'GET' && r.path.endsWith('/files'))).toHaveLength(3);
  });
});
