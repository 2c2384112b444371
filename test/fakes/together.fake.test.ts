/**
 * Proves the fake Together speaks Together's wire protocol by driving it with the official
 * `together-ai` SDK: files (the SDK's own upload helper with its 302 + presigned PUT flow), fine-tunes,
 * events, checkpoints, metrics and chat, plain and streamed, plus the errors the SDK maps.
 *
 * Three quirks of together-ai 0.52 shape this file:
 * - its upload helper ignores the client's `baseURL`: it reads `TOGETHER_API_BASE_URL` once, when the
 *   module loads, so one fake serves the whole file and the SDK is loaded after the variable is set;
 * - in its ES-module build the helper finds no `fs` (it calls `require`, undefined there), so the
 *   CommonJS build is the one that can upload;
 * - the helper PUTs a file stream with `fetch` but without `duplex: 'half'`, which Node's fetch demands
 *   for stream bodies, so on Node it always fails. A shim adds exactly that option and nothing else.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type * as TogetherSdk from 'together-ai';
import { chatExample, chatJsonl } from '../support/factories';
import { startFakeTogether, type FakeTogether } from './together-server';

type TogetherModule = typeof TogetherSdk;

const KEY = 'tg-test-key-0123456789';
const BASE = 'meta-llama/Meta-Llama-3.1-8B-Instruct-Reference';
const messages = [{ role: 'user' as const, content: 'Say hi' }];

let fake: FakeTogether;
let sdk: TogetherModule;
let client: InstanceType<TogetherModule['default']>;
let tmpDir: string;

beforeAll(async () => {
  fake = await startFakeTogether({ apiKey: KEY, userId: 'acme', streamDelayMs: 20 });
  process.env.TOGETHER_API_BASE_URL = fake.url;
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the CommonJS build, required after the env var is set: see above
  sdk = require('together-ai') as TogetherModule;
  client = new sdk.default({ apiKey: KEY, baseURL: fake.url, maxRetries: 0 });
  tmpDir = await fs.mkdtemp(path.join(os.tmpdir(), 'together-fake-'));
  const nodeFetch = globalThis.fetch;
  jest.spyOn(globalThis, 'fetch').mockImplementation((input, init) => {
    const streamed = init?.body && typeof (init.body as { pipe?: unknown }).pipe === 'function';
    return nodeFetch(input, streamed ? ({ ...init, duplex: 'half' } as RequestInit) : init);
  });
});

afterAll(async () => {
  jest.restoreAllMocks();
  delete process.env.TOGETHER_API_BASE_URL;
  await fake.close();
  await fs.rm(tmpDir, { recursive: true, force: true });
});

async function writeDataset(name: string, content: string): Promise<string> {
  const file = path.join(tmpDir, name);
  await fs.writeFile(file, content);
  return file;
}

/** Uploads a valid chat dataset through the SDK's helper. */
async function uploadDataset(examples = 6) {
  const file = await writeDataset(`train-${randomSuffix()}.jsonl`, chatJsonl(examples));
  return { file, uploaded: await client.files.upload(file, 'fine-tune') };
}

const randomSuffix = () => Math.random().toString(36).slice(2, 8);

/** The error a call rejects with. */
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => Promise.reject(new Error('expected the call to fail')),
    (e: unknown) => e as InstanceType<TogetherModule['APIError']>,
  );

async function completedJob(suffix = 'tuned') {
  const { uploaded } = await uploadDataset();
  const job = await client.fineTuning.create({ model: BASE, training_file: uploaded.id, suffix, n_epochs: 2, n_checkpoints: 2 });
  const statuses: string[] = [];
  for (let i = 0; i < 20 && statuses.at(-1) !== 'completed'; i++) statuses.push((await client.fineTuning.retrieve(job.id)).status);
  return { job, statuses };
}

describe('files', () => {
  test("the SDK's upload helper: 302 to a presigned PUT, then a GET of the file; the bytes arrive exactly", async () => {
    const before = fake.state.requests.length;
    const { file, uploaded } = await uploadDataset(6);
    expect(uploaded).toMatchObject({
      id: expect.stringMatching(/^file-[0-9a-f-]{36}$/),
      object: 'file',
      filename: file, // the helper sends the path it was given as file_name
      purpose: 'fine-tune',
      FileType: 'jsonl',
      Processed: true,
    });
    expect(fake.state.fileContents.get(uploaded.id)!.equals(await fs.readFile(file))).toBe(true);

    const [start, put, get] = fake.state.requests.slice(before);
    expect(start).toMatchObject({ method: 'POST', path: '/v1/files' });
    expect(start.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(put.method).toBe('PUT');
    expect(put.path).toMatch(/^\/__presigned\//);
    expect(put.headers.authorization).toBeUndefined();
    expect(get).toMatchObject({ method: 'GET', path: `/v1/files/${uploaded.id}` });

    const validated = await client.files.retrieve(uploaded.id);
    expect(validated).toMatchObject({
      processing_status: 'COMPLETED',
      validation_report: { valid: true, nlines: 6, dataset_format: 'CONVERSATION', file_id: uploaded.id },
    });
  });

  test('list, content and delete', async () => {
    const { file, uploaded } = await uploadDataset(3);
    expect((await client.files.list()).data.map((f) => f.id)).toContain(uploaded.id);
    expect(await (await client.files.content(uploaded.id)).text()).toBe(await fs.readFile(file, 'utf8'));
    expect(await client.files.delete(uploaded.id)).toEqual({ id: uploaded.id, deleted: true });
    const gone = await failure(client.files.retrieve(uploaded.id));
    expect(gone).toBeInstanceOf(sdk.NotFoundError);
    expect(gone.status).toBe(404);
  });

  test('a file that fails validation ends INVALID_FORMAT with a report, and a fine-tune refuses it', async () => {
    const file = await writeDataset('broken.jsonl', `${chatExample(1)}\n{"messages": "nope"}\n`);
    const uploaded = await client.files.upload(file, 'fine-tune', false); // skip the SDK's local check: the server must catch it
    expect(uploaded.processing_status).toBe('RUNNING');
    const checked = await client.files.retrieve(uploaded.id);
    expect(checked).toMatchObject({
      processing_status: 'INVALID_FORMAT',
      validation_report: { valid: false, error_type: 'INVALID_FORMAT', error: expect.stringContaining('Line 2') },
    });

    const refused = await failure(client.fineTuning.create({ model: BASE, training_file: uploaded.id }));
    expect(refused).toBeInstanceOf(sdk.BadRequestError);
    expect(refused.error).toMatchObject({ error: { param: 'training_file', type: 'invalid_request_error' } });
  });

  test('the documented multipart POST /v1/files/upload answers a FileResponse; a missing field is 400', async () => {
    const form = new FormData();
    form.append('purpose', 'fine-tune');
    form.append('file_name', 'direct.jsonl');
    form.append('file', new Blob([chatExample(1) + '\n']), 'direct.jsonl');
    const res = await fetch(`${fake.url}/files/upload`, { method: 'POST', headers: { authorization: `Bearer ${KEY}` }, body: form });
    expect(res.status).toBe(200);
    const uploaded = await res.json();
    expect(uploaded).toMatchObject({
      object: 'file',
      filename: 'direct.jsonl',
      FileType: 'jsonl',
      Processed: true,
      processing_status: 'PENDING',
      bytes: Buffer.byteLength(chatExample(1)) + 1,
    });
    expect(await client.files.retrieve(uploaded.id)).toMatchObject({ processing_status: 'RUNNING' });

    const incomplete = new FormData();
    incomplete.append('purpose', 'fine-tune');
    incomplete.append('file', new Blob(['x']), 'x.jsonl');
    const missing = await fetch(`${fake.url}/files/upload`, { method: 'POST', headers: { authorization: `Bearer ${KEY}` }, body: incomplete });
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ error: { param: 'file_name' } });
  });

  test('a presigned URL that is unknown or expired is refused with S3-style XML 403', async () => {
    const unknown = await fetch(`${fake.origin}/__presigned/not-a-token`, { method: 'PUT', body: 'x' });
    expect(unknown.status).toBe(403);
    expect(await unknown.text()).toContain('<Code>AccessDenied</Code>');

    const quick = await startFakeTogether({ apiKey: KEY, presignedTtlMs: 1 });
    try {
      const start = await fetch(`${quick.url}/files`, {
        method: 'POST',
        redirect: 'manual',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ file_name: 'late.jsonl', file_type: 'jsonl', purpose: 'fine-tune' }),
      });
      expect(start.status).toBe(302);
      expect(start.headers.get('x-together-file-id')).toMatch(/^file-/);
      await new Promise((resolve) => setTimeout(resolve, 10));
      const late = await fetch(start.headers.get('location')!, { method: 'PUT', body: chatExample(1) });
      expect(late.status).toBe(403);
      expect(await late.text()).toContain('<Message>Request has expired</Message>');
      expect(quick.state.files.size).toBe(0);
    } finally {
      await quick.close();
    }
  });
});

describe('fine-tuning', () => {
  test('create answers a pending truncated job; retrieve advances it to completed with events, checkpoints and metrics', async () => {
    const { uploaded } = await uploadDataset();
    const params = { model: BASE, training_file: uploaded.id, suffix: 'my-run', n_epochs: 2, n_checkpoints: 2, learning_rate: 0.0001 };
    const job = await client.fineTuning.create(params);
    expect(job).toMatchObject({ ...params, id: expect.stringMatching(/^ft-[0-9a-f-]{36}$/), status: 'pending', user_id: 'acme' });
    expect(job.model_output_name).toMatch(/^acme\/Meta-Llama-3\.1-8B-Instruct-Reference-my-run-[0-9a-f]{8}$/);
    expect(job).not.toHaveProperty('events');
    expect((await client.fineTuning.list()).data.map((j) => j.id)).toContain(job.id);

    const statuses: string[] = [];
    for (let i = 0; i < 20 && statuses.at(-1) !== 'completed'; i++) statuses.push((await client.fineTuning.retrieve(job.id)).status);
    expect(statuses).toEqual(['queued', 'running', 'running', 'running', 'compressing', 'uploading', 'completed']);

    const full = await client.fineTuning.retrieve(job.id);
    expect(full.events!.map((e) => e.type)).toEqual([
      'job_pending',
      'job_start',
      'training_start',
      'checkpoint_save',
      'epoch_complete',
      'epoch_complete',
      'training_complete',
      'model_compressing',
      'model_compression_complete',
      'model_uploading',
      'model_upload_complete',
      'job_complete',
    ]);
    expect((await client.fineTuning.listEvents(job.id)).data).toEqual(full.events);
    const checkpoints = (await client.fineTuning.listCheckpoints(job.id)).data;
    expect(checkpoints.map((c) => c.checkpoint_type)).toEqual([expect.stringMatching(/^Intermediate/), expect.stringMatching(/^Final/)]);
    const { metrics } = await client.fineTuning.listMetrics(job.id);
    expect(metrics!.map((m) => m['train/epoch'])).toEqual([1, 2]);
    expect((await client.fineTuning.listMetrics(job.id, { global_step_from: metrics![1]['train/global_step'] })).metrics).toHaveLength(1);
  });

  test('cancel goes cancel_requested, then cancelled; a finished job cannot be cancelled', async () => {
    const { uploaded } = await uploadDataset();
    const job = await client.fineTuning.create({ model: BASE, training_file: uploaded.id });
    await client.fineTuning.retrieve(job.id);
    expect(await client.fineTuning.cancel(job.id)).toMatchObject({ id: job.id, status: 'cancel_requested' });
    const cancelled = await client.fineTuning.retrieve(job.id);
    expect(cancelled.status).toBe('cancelled');
    expect(cancelled.events!.slice(-2).map((e) => e.type)).toEqual(['cancel_requested', 'job_stopped']);
    const again = await failure(client.fineTuning.cancel(job.id));
    expect(again).toBeInstanceOf(sdk.BadRequestError);
  });

  test('failJob forces status error with a job_error event', async () => {
    const { uploaded } = await uploadDataset();
    const job = await client.fineTuning.create({ model: BASE, training_file: uploaded.id });
    fake.failJob(job.id, 'CUDA out of memory');
    const failed = await client.fineTuning.retrieve(job.id);
    expect(failed.status).toBe('error');
    expect(failed.events!.at(-1)).toMatchObject({ type: 'job_error', level: 'error', message: 'CUDA out of memory' });
  });

  test('delete removes the job', async () => {
    const { uploaded } = await uploadDataset();
    const job = await client.fineTuning.create({ model: BASE, training_file: uploaded.id });
    expect(await client.fineTuning.delete(job.id)).toEqual({ message: expect.stringContaining(job.id) });
    expect(await failure(client.fineTuning.retrieve(job.id))).toBeInstanceOf(sdk.NotFoundError);
  });

  test('create refuses an unknown model, a missing or unknown file, a long suffix and wrongly typed parameters', async () => {
    const { uploaded } = await uploadDataset();
    const refused = async (params: Record<string, unknown>, param: string) => {
      const err = await failure(client.fineTuning.create(params as never));
      expect(err).toBeInstanceOf(sdk.BadRequestError);
      expect(err.error).toMatchObject({ error: { param, type: 'invalid_request_error' } });
    };
    await refused({ model: 'no/such-model', training_file: uploaded.id }, 'model');
    await refused({ model: BASE, training_file: 'file-00000000-0000-0000-0000-000000000000' }, 'training_file');
    await refused({ model: BASE }, 'training_file');
    await refused({ model: BASE, training_file: uploaded.id, suffix: 'x'.repeat(65) }, 'suffix');
    await refused({ model: BASE, training_file: uploaded.id, n_epochs: '3' }, 'n_epochs');
    await refused({ model: BASE, training_file: uploaded.id, batch_size: 'huge' }, 'batch_size');
    await refused({ model: BASE, training_file: uploaded.id, training_type: { type: 'QLoRA' } }, 'training_type');
  });
});

describe('chat', () => {
  test('a base model answers; a fine-tuned model answers only once its job completed', async () => {
    const completion = await client.chat.completions.create({ model: BASE, messages });
    expect(completion.choices[0].message!.content).toBe(`Answer from ${BASE}: Say hi`);

    const { uploaded } = await uploadDataset();
    const pending = await client.fineTuning.create({ model: BASE, training_file: uploaded.id });
    const early = await failure(client.chat.completions.create({ model: pending.model_output_name!, messages }));
    expect(early).toBeInstanceOf(sdk.NotFoundError);
    expect(early.error).toMatchObject({ error: { code: 'model_not_available', type: 'invalid_request_error' } });

    const { job } = await completedJob();
    const tuned = await client.chat.completions.create({ model: job.model_output_name!, messages });
    expect(tuned.choices[0].message!.content).toBe(`Answer from ${job.model_output_name}: Say hi`);
  });

  test('a stream arrives chunk by chunk, and a client that leaves mid-stream is counted', async () => {
    const pieces: string[] = [];
    const stream = await client.chat.completions.create({ model: BASE, messages: [{ role: 'user', content: 'Tell me a long story please' }], stream: true });
    for await (const chunk of stream) pieces.push(chunk.choices[0]?.delta?.content ?? '');
    expect(pieces.filter(Boolean).length).toBeGreaterThan(3);
    expect(pieces.join('')).toBe(`Answer from ${BASE}: Tell me a long story please`);

    const before = fake.state.abandonedStreams;
    const abandoned = await client.chat.completions.create({ model: BASE, messages: [{ role: 'user', content: 'Tell me a long story please' }], stream: true });
    for await (const _chunk of abandoned) break;
    for (let i = 0; i < 50 && fake.state.abandonedStreams === before; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(fake.state.abandonedStreams).toBe(before + 1);
  });

  test('an injected 429 carries retry-after; the SDK retries it when allowed', async () => {
    fake.failNext('POST', '/v1/chat/completions', 429, { retryAfter: '3' });
    const limited = await failure(client.chat.completions.create({ model: BASE, messages }));
    expect(limited).toBeInstanceOf(sdk.RateLimitError);
    expect(limited.headers?.get('retry-after')).toBe('3');
    expect(limited.error).toMatchObject({ error: { type: 'rate_limit', code: 'rate_limit_exceeded' } });

    fake.failNext('POST', '/v1/chat/completions', 429, { retryAfter: '0' });
    const attempts = () => fake.state.requests.filter((r) => r.path === '/v1/chat/completions').length;
    const [before, answeredBefore] = [attempts(), fake.state.chatRequests.length];
    const retrying = new sdk.default({ apiKey: KEY, baseURL: fake.url, maxRetries: 1 });
    expect((await retrying.chat.completions.create({ model: BASE, messages })).choices).toHaveLength(1);
    expect(attempts()).toBe(before + 2);
    expect(fake.state.chatRequests.length).toBe(answeredBefore + 1); // the throttled attempt never reached the route
  });

  test('a wrong key is 401 invalid_api_key, and nothing reaches the routes', async () => {
    const before = fake.state.chatRequests.length;
    const wrong = new sdk.default({ apiKey: 'wrong', baseURL: fake.url, maxRetries: 0 });
    const err = await failure(wrong.chat.completions.create({ model: BASE, messages }));
    expect(err).toBeInstanceOf(sdk.AuthenticationError);
    expect(err.error).toMatchObject({ error: { code: 'invalid_api_key', type: 'invalid_request_error' } });
    expect(fake.state.chatRequests.length).toBe(before);
  });
});
