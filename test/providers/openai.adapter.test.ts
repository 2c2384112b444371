/**
 * The OpenAI adapter against the fake OpenAI server, over real HTTP: wire translation, streaming
 * upload, paging, and the providerFetch rules (errors, retries only when safe, timeouts).
 */
import { createReadStream, promises as fs } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { GatewayError } from '../../src/errors';
import { parseRetryAfter, type HttpPolicy } from '../../src/providers/http';
import { ProviderRegistry, type ProviderClient } from '../../src/providers/registry';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';

const API_KEY = 'sk-test-adapter-0123456789';

let fake: FakeOpenAI;
let tmpDir: string;

/** The adapter as the gateway calls it: through the registry, with settings from client-mode headers. */
function openai(options: { http?: HttpPolicy; headers?: Record<string, string | undefined> } = {}): ProviderClient {
  const registry = new ProviderRegistry({ GATEWAY_OPENAI_BASE_URL: fake.url }, { baseDelayMs: 1, timeoutMs: 5_000, ...options.http });
  const headers = {
    authorization: `Bearer ${API_KEY}`,
    'x-gateway-openai-organization': 'org-123',
    'x-gateway-openai-project': 'proj-456',
    ...options.headers,
  };
  return registry.client('openai', { kind: 'headers', headers });
}

beforeEach(async () => {
  fake = await startFakeOpenAI({ apiKey: API_KEY });
});

afterEach(() => fake.close());

beforeAll(async () => {
  tmpDir = await fs.mkdtemp(path.join(os.tmpdir(), 'openai-adapter-'));
});

afterAll(() => fs.rm(tmpDir, { recursive: true, force: true }));

/** Writes a JSONL dataset to disk and uploads it through the adapter as a stream. */
async function uploadDataset(lines = 10) {
  const example = JSON.stringify({
    messages: [
      { role: 'user', content: 'Hi — ünïcödé' },
      { role: 'assistant', content: 'Hello' },
    ],
  });
  const content = Buffer.from(Array.from({ length: lines }, () => example).join('\n') + '\n');
  const file = path.join(tmpDir, `train-${lines}.jsonl`);
  await fs.writeFile(file, content);
  const opened: number[] = [];
  const uploaded = await openai().uploadFile({
    filename: 'träin.jsonl',
    purpose: 'fine-tune',
    bytes: content.length,
    open: () => {
      opened.push(Date.now());
      return createReadStream(file, { highWaterMark: 1024 });
    },
  });
  return { uploaded, content, opened };
}

async function createJob(suffix?: string) {
  const { uploaded } = await uploadDataset();
  return openai().createJob({ model: 'gpt-4o-mini-2024-07-18', trainingFile: uploaded.id, suffix, seed: 7, options: {} });
}

/** Expects the promise to fail with a provider GatewayError and returns it. */
async function providerError(promise: Promise<unknown>): Promise<GatewayError> {
  const err = await promise.then(
    () => {
      throw new Error('expected a provider error');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(GatewayError);
  expect((err as GatewayError).kind).toBe('provider');
  return err as GatewayError;
}

const requestsTo = (method: string, p: string) => fake.state.requests.filter((r) => r.method === method && r.path === p);

describe('openai adapter', () => {
  it('streams a multipart upload with a known Content-Length and maps the file object', async () => {
    const { uploaded, content, opened } = await uploadDataset(200);

    expect(opened).toHaveLength(1);
    expect(uploaded).toEqual({
      id: expect.stringMatching(/^file-/),
      bytes: content.length,
      createdAt: expect.any(Number),
      filename: 'träin.jsonl',
      purpose: 'fine-tune',
      status: 'processed',
      statusDetails: null,
    });
    expect(fake.state.files.get(uploaded.id)!.content.equals(content)).toBe(true);

    const [req] = requestsTo('POST', '/v1/files');
    expect(req.headers['transfer-encoding']).toBeUndefined();
    expect(Number(req.headers['content-length'])).toBeGreaterThan(content.length);
    expect(req.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    expect(req.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(req.headers['openai-organization']).toBe('org-123');
    expect(req.headers['openai-project']).toBe('proj-456');

    // The fake serves the stored file back in OpenAI's shape.
    const res = await fetch(`${fake.url}/files/${uploaded.id}`, { headers: { authorization: `Bearer ${API_KEY}` } });
    expect(await res.json()).toMatchObject({ id: uploaded.id, object: 'file', bytes: content.length });
  });

  it.each([
    ['shorter', 10, /yielded 3 bytes, expected 10/],
    ['longer', 2, /yielded 3 bytes, expected 2/],
  ])('refuses an upload whose stream is %s than declared', async (_label, bytes, message) => {
    const file = path.join(tmpDir, 'abc.jsonl');
    await fs.writeFile(file, 'abc');
    const open = () => createReadStream(file);
    const upload = openai().uploadFile({ filename: 'abc.jsonl', purpose: 'fine-tune', bytes, open });
    await expect(upload).rejects.toMatchObject({ kind: 'internal', message: expect.stringMatching(message) });
    expect(fake.state.files.size).toBe(0);
  });

  it("reports unreadable upload content as our failure, not the provider's", async () => {
    const open = () => createReadStream(path.join(tmpDir, 'does-not-exist.jsonl'));
    const upload = openai().uploadFile({ filename: 'gone.jsonl', purpose: 'fine-tune', bytes: 5, open });
    await expect(upload).rejects.toMatchObject({
      kind: 'internal',
      message: "Could not read upload content for 'gone.jsonl'",
    });
  });

  it('creates a job and drives it to succeeded by polling', async () => {
    const created = await createJob('my-model');
    expect(created).toMatchObject({
      id: expect.stringMatching(/^ftjob-/),
      status: 'validating_files',
      model: 'gpt-4o-mini-2024-07-18',
      fineTunedModel: null,
      trainedTokens: null,
      error: null,
      finishedAt: null,
      seed: 7,
      suffix: 'my-model',
      validationFile: null,
      resultFiles: [],
      metadata: null,
    });
    expect(created.method).toMatchObject({ type: 'supervised' });
    expect(created.hyperparameters).toMatchObject({ nEpochs: 'auto' });

    const statuses: string[] = [];
    let job = created;
    while (job.status !== 'succeeded') {
      job = await openai().getJob(created.id);
      statuses.push(job.status);
    }
    expect(statuses).toEqual(['queued', 'running', 'succeeded']);
    expect(job.fineTunedModel).toBe(`ft:gpt-4o-mini-2024-07-18:my-model:${created.id}`);
    expect(job.trainedTokens).toBeGreaterThan(0);
    expect(job.finishedAt).toEqual(expect.any(Number));
    expect(job.resultFiles).toHaveLength(1);
  });

  it('identifies itself with a user-agent on every call', async () => {
    // A JSON call, a streamed upload and a streamed download.
    await openai().listJobs({});
    const { uploaded } = await uploadDataset(3);
    const content = await openai().fileContent(uploaded.id);
    content.stream.resume();
    await new Promise((resolve) => content.stream.once('end', resolve));
    expect(fake.state.requests.length).toBe(3);
    expect(fake.state.requests.map((r) => r.headers['user-agent'])).toEqual(['model-gateway', 'model-gateway', 'model-gateway']);
  });

  it('sends no organization or project headers when none are configured', async () => {
    await openai({ headers: { 'x-gateway-openai-organization': undefined, 'x-gateway-openai-project': undefined } }).listJobs({});
    const [req] = requestsTo('GET', '/v1/fine_tuning/jobs');
    expect(req.headers).not.toHaveProperty('openai-organization');
    expect(req.headers).not.toHaveProperty('openai-project');
  });

  it('passes validation file, method and metadata through, and honours stepsPerPoll', async () => {
    await fake.close();
    fake = await startFakeOpenAI({ apiKey: API_KEY, stepsPerPoll: 3 });
    const { uploaded } = await uploadDataset();
    const method = { type: 'supervised' as const, hyperparameters: { nEpochs: 2 } };
    const created = await openai().createJob({
      model: 'gpt-4o-mini',
      trainingFile: uploaded.id,
      validationFile: uploaded.id,
      method,
      metadata: { team: 'search' },
      options: {},
    });
    expect(created).toMatchObject({ validationFile: uploaded.id, method, metadata: { team: 'search' }, suffix: null });
    const sent = [...fake.state.jobs.values()][0];
    expect(sent.method).toEqual({ type: 'supervised', supervised: { hyperparameters: { n_epochs: 2 } } });
    const job = await openai().getJob(created.id);
    expect(job).toMatchObject({ status: 'succeeded', fineTunedModel: `ft:gpt-4o-mini:fake:${created.id}` });
  });

  it('pages the job list newest first with after/limit/hasMore', async () => {
    const jobs = [];
    for (let i = 0; i < 3; i++) jobs.push(await createJob(`s${i}`));
    const newestFirst = jobs.map((j) => j.id).reverse();

    const first = await openai().listJobs({ limit: 2 });
    expect(first.data.map((j) => j.id)).toEqual(newestFirst.slice(0, 2));
    expect(first.hasMore).toBe(true);
    expect(first.nextAfter).toBe(first.data[1].id);

    const second = await openai().listJobs({ limit: 2, after: first.nextAfter ?? undefined });
    expect(second.data.map((j) => j.id)).toEqual(newestFirst.slice(2));
    expect(second.hasMore).toBe(false);
    expect(second.data[0].suffix).toBe('s0');
  });

  it('lists events and checkpoints in the internal shape', async () => {
    const { id } = await createJob();
    for (let i = 0; i < 3; i++) await openai().getJob(id);

    const events = await openai().listEvents(id, {});
    expect(events.hasMore).toBe(false);
    expect(events.data[0]).toEqual({
      id: expect.stringMatching(/^ftevent-/),
      createdAt: expect.any(Number),
      level: 'info',
      message: 'The job has successfully completed',
      type: 'message',
      data: {},
    });
    expect(events.data.map((e) => e.message)).toContain('Fine-tuning job started');

    const firstEvents = await openai().listEvents(id, { limit: 2 });
    expect(firstEvents).toMatchObject({ hasMore: true, data: [events.data[0], events.data[1]] });

    const checkpoints = await openai().listCheckpoints(id, { limit: 2 });
    expect(checkpoints.hasMore).toBe(true);
    expect(checkpoints.data.map((c) => c.stepNumber)).toEqual([30, 20]);
    expect(checkpoints.data[0]).toEqual({
      id: expect.stringMatching(/^ftckpt-/),
      createdAt: expect.any(Number),
      fineTunedModelCheckpoint: expect.stringMatching(/:ckpt-step-30$/),
      stepNumber: 30,
      metrics: expect.objectContaining({ step: 30, train_loss: expect.any(Number) }),
      fineTuningJobId: id,
    });
    const rest = await openai().listCheckpoints(id, { after: checkpoints.data[1].id });
    expect(rest).toMatchObject({ hasMore: false, data: [{ stepNumber: 10 }] });
  });

  it('cancels a running job, and surfaces the provider refusal to cancel a finished one', async () => {
    const { id } = await createJob();
    const cancelled = await openai().cancelJob(id);
    expect(cancelled).toMatchObject({ id, status: 'cancelled', finishedAt: expect.any(Number) });

    const err = await providerError(openai().cancelJob(id));
    expect(err.status).toBe(400);
    expect(err.message).toMatch(/already completed/);
  });

  it("maps a provider 400 to a provider GatewayError with the provider's status, message and param", async () => {
    const err = await providerError(openai().createJob({ model: 'gpt-4o-mini', trainingFile: 'file-missing', options: {} }));
    expect(err.status).toBe(400);
    expect(err.message).toBe('OpenAI: invalid training_file: file-missing');
    expect(err.param).toBe('training_file');
    expect(err.type).toBe('provider_error');
  });

  it('maps an unknown job to the provider 404 with its code', async () => {
    const err = await providerError(openai().getJob('ftjob-nope'));
    expect(err).toMatchObject({ status: 404, code: 'fine_tune_not_found' });
  });

  it('maps a wrong API key to a provider 401 without echoing the key', async () => {
    const err = await providerError(openai({ headers: { authorization: 'Bearer sk-wrong-key-987654' } }).listJobs({}));
    expect(err).toMatchObject({ status: 401, code: 'invalid_api_key' });
    expect(err.message).not.toContain('sk-wrong-key-987654');
  });

  it('scrubs credentials a provider echoes back in an error message', async () => {
    fake.failNext('GET', '/v1/fine_tuning/jobs', 500, { times: 3, message: `bad key ${API_KEY}` });
    const err = await providerError(openai().listJobs({}));
    expect(err.status).toBe(502);
    expect(err.message).toBe('OpenAI: bad key [redacted]');
  });

  it('retries a GET answered 429 with Retry-After: 0, and succeeds', async () => {
    const { id } = await createJob();
    fake.failNext('GET', `/v1/fine_tuning/jobs/${id}`, 429, { retryAfter: '0', times: 2 });
    const job = await openai().getJob(id);
    expect(job.id).toBe(id);
    expect(requestsTo('GET', `/v1/fine_tuning/jobs/${id}`)).toHaveLength(3);
  });

  it('gives up on a GET after the bounded number of retries', async () => {
    fake.failNext('GET', '/v1/fine_tuning/jobs', 503, { times: 5 });
    const err = await providerError(openai().listJobs({}));
    expect(err.status).toBe(502);
    expect(requestsTo('GET', '/v1/fine_tuning/jobs')).toHaveLength(3); // first try + 2 retries
  });

  it('does not retry a POST create answered 500', async () => {
    const { uploaded } = await uploadDataset();
    fake.failNext('POST', '/v1/fine_tuning/jobs', 500);
    const err = await providerError(openai().createJob({ model: 'gpt-4o-mini', trainingFile: uploaded.id, options: {} }));
    expect(err.status).toBe(502);
    expect(requestsTo('POST', '/v1/fine_tuning/jobs')).toHaveLength(1);
    expect(fake.state.jobs.size).toBe(0);
  });

  it('caps a long Retry-After at maxRetryWaitMs', async () => {
    fake.failNext('GET', '/v1/fine_tuning/jobs', 429, { retryAfter: '3600' });
    const started = Date.now();
    const page = await openai({ http: { maxRetryWaitMs: 20 } }).listJobs({});
    expect(page.data).toEqual([]);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('retries a cancel (marked idempotent) answered 503', async () => {
    const { id } = await createJob();
    fake.failNext('POST', `/v1/fine_tuning/jobs/${id}/cancel`, 503);
    await expect(openai().cancelJob(id)).resolves.toMatchObject({ status: 'cancelled' });
    expect(requestsTo('POST', `/v1/fine_tuning/jobs/${id}/cancel`)).toHaveLength(2);
  });

  it('does not retry a streamed upload answered 500', async () => {
    fake.failNext('POST', '/v1/files', 500);
    const err = await providerError(uploadDataset());
    expect(err.status).toBe(502);
    expect(requestsTo('POST', '/v1/files')).toHaveLength(1);
  });

  it('maps a timeout to a provider 504', async () => {
    fake.delayNext('GET', '/v1/fine_tuning/jobs', 1_000);
    const err = await providerError(openai({ http: { timeoutMs: 50 } }).listJobs({}));
    expect(err.status).toBe(504);
  });

  it('maps an unreachable provider to a provider 502', async () => {
    await fake.close();
    const err = await providerError(openai({ http: { retries: 0 } }).getJob('ftjob-x'));
    expect(err.status).toBe(502);
    fake = await startFakeOpenAI({ apiKey: API_KEY }); // afterEach closes it
  });

  it('follows no redirect: a provider answering 302 to another host is a 502, and that host is never called', async () => {
    const elsewhere: string[] = [];
    const target = http.createServer((req, res) => {
      elsewhere.push(`${req.method} ${req.url} ${req.headers.authorization ?? ''}`);
      res.end('{}');
    });
    const redirecting = http.createServer((_req, res) => {
      const address = target.address() as AddressInfo;
      res.writeHead(302, { location: `http://127.0.0.1:${address.port}/v1/fine_tuning/jobs` }).end();
    });
    await Promise.all([target, redirecting].map((server) => new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))));
    try {
      const registry = new ProviderRegistry({ GATEWAY_OPENAI_BASE_URL: `http://127.0.0.1:${(redirecting.address() as AddressInfo).port}/v1` }, { retries: 0 });
      const client = registry.client('openai', { kind: 'headers', headers: { authorization: `Bearer ${API_KEY}` } });
      expect(await providerError(client.listJobs({}))).toMatchObject({ kind: 'provider', status: 502 });
      expect(elsewhere).toEqual([]);
    } finally {
      await Promise.all([target, redirecting].map((server) => new Promise((resolve) => server.close(resolve))));
    }
  });

  it('refuses a missing key before any request, naming the header', async () => {
    const err = await openai({ headers: { authorization: undefined } })
      .listJobs({})
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: 'invalid_request', param: 'authorization', code: 'missing_setting' });
    expect(fake.state.requests).toHaveLength(0);
  });

  it('raises the typed unsupported error for a name that is no provider', () => {
    const registry = new ProviderRegistry({}, {});
    expect(() => registry.client('not-a-provider', { kind: 'headers', headers: {} })).toThrow(
      expect.objectContaining({ kind: 'unsupported', status: 400, code: 'unsupported_provider' }),
    );
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2025-01-01T00:00:00Z');
  it.each([
    ['0', 0],
    ['2', 2_000],
    ['1.5', 1_500],
    ['Wed, 01 Jan 2025 00:00:03 GMT', 3_000],
    ['Tue, 31 Dec 2024 23:59:00 GMT', 0], // a date in the past means "now"
    ['soon', undefined],
  ])('%s → %s ms', (value, ms) => expect(parseRetryAfter(value, now)).toBe(ms));
});
