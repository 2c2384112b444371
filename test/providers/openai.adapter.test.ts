/**
 * The OpenAI adapter against the fake OpenAI server: the adapter contract (test/support/provider-kit.ts)
 * and what only OpenAI does or what is tested on it alone: the file and job objects mapped, uploads
 * from disk whose length is wrong or which cannot be read, organization and project headers, the
 * user-agent, checkpoints, an idempotent cancel retried, the provider's 400 with its param, echoed
 * credentials scrubbed, an unreachable provider, no redirect followed, and Retry-After parsing.
 */
import { createReadStream } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseRetryAfter } from '../../src/providers/http';
import { ProviderRegistry, type ProviderClient } from '../../src/providers/registry';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { failure } from '../support/expect';
import { adapterContract, chatDataset, pieces, runToEnd, type ClientOptions } from '../support/provider-kit';

const API_KEY = 'sk-test-adapter-0123456789';

let fake: FakeOpenAI;

/** The adapter as the gateway calls it: through the registry, with settings from client-mode headers. */
function openai(options: ClientOptions = {}): ProviderClient {
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
  fake = await startFakeOpenAI({ apiKey: API_KEY, streamDelayMs: 20 });
});

afterEach(() => fake.close());

const upload = (content: Buffer, filename = 'träin.jsonl') =>
  openai().uploadFile({ filename, purpose: 'fine-tune', bytes: content.length, open: () => pieces(content, 1024) });

async function createJob(suffix?: string) {
  const uploaded = await upload(chatDataset(10));
  return openai().createJob({ model: 'gpt-4o-mini-2024-07-18', trainingFile: uploaded.id, suffix, seed: 7, options: {} });
}

const requestsTo = (method: string, p: string) => fake.state.requests.filter((r) => r.method === method && r.path === p);

adapterContract('openai', {
  client: openai,
  fake: () => fake,
  files: {
    upload: (n, filename) => upload(chatDataset(n), filename),
    content: (_file, n) => chatDataset(n),
    uploadPath: '/v1/files',
    lastPageCursor: 'last id',
    readsAsUploaded: true,
  },
  jobs: {
    create: async (extra = {}) => openai().createJob({ model: 'gpt-4o-mini', trainingFile: (await upload(chatDataset(10))).id, options: {}, ...extra }),
    statuses: ['queued', 'running', 'succeeded'],
    createPath: '/v1/fine_tuning/jobs',
    listPath: '/v1/fine_tuning/jobs',
    unknown: { id: 'ftjob-nope', code: 'fine_tune_not_found' },
    cancelledAs: 'cancelled',
    cancelRefusal: { message: /already completed/ },
  },
  settings: { required: 'authorization', hostile: [] },
  wrongCredentials: { headers: { authorization: 'Bearer sk-wrong-key-987654' }, secret: 'sk-wrong-key-987654', status: 401, code: 'invalid_api_key' },
  chat: { model: 'gpt-4o-mini', abandonedStreams: () => fake.state.abandonedStreams },
});

describe('openai adapter', () => {
  it('streams a multipart upload with a known Content-Length, opened once, and maps the file object', async () => {
    const content = chatDataset(200);
    let opened = 0;
    const open = () => (opened++, pieces(content, 1024));
    const uploaded = await openai().uploadFile({ filename: 'träin.jsonl', purpose: 'fine-tune', bytes: content.length, open });
    expect(opened).toBe(1);
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
  });

  it.each([
    ['shorter', 10, /yielded 3 bytes, expected 10/],
    ['longer', 2, /yielded 3 bytes, expected 2/],
  ])('refuses an upload whose stream is %s than declared', async (_label, bytes, message) => {
    const upload = openai().uploadFile({ filename: 'abc.jsonl', purpose: 'fine-tune', bytes, open: () => pieces(Buffer.from('abc')) });
    expect(await failure(upload, 'internal')).toMatchObject({ message: expect.stringMatching(message) });
    expect(fake.state.files.size).toBe(0);
  });

  it("reports unreadable upload content as our failure, not the provider's", async () => {
    const open = () => createReadStream(path.join(os.tmpdir(), `does-not-exist-${process.pid}.jsonl`));
    const upload = openai().uploadFile({ filename: 'gone.jsonl', purpose: 'fine-tune', bytes: 5, open });
    expect(await failure(upload, 'internal')).toMatchObject({ message: "Could not read upload content for 'gone.jsonl'" });
  });

  it('maps the job object on create and on success', async () => {
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
    await runToEnd(openai(), created.id);
    const job = await openai().getJob(created.id);
    expect(job.fineTunedModel).toBe(`ft:gpt-4o-mini-2024-07-18:my-model:${created.id}`);
    expect(job.trainedTokens).toBeGreaterThan(0);
    expect(job.resultFiles).toHaveLength(1);
    expect((await openai().listJobs({})).data[0].suffix).toBe('my-model');
  });

  it('identifies itself with a user-agent on every call', async () => {
    // A JSON call, a streamed upload and a streamed download.
    await openai().listJobs({});
    const uploaded = await upload(chatDataset(3));
    const content = await openai().fileContent(uploaded.id);
    content.stream.resume();
    await new Promise((resolve) => content.stream.once('end', resolve));
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
    const uploaded = await upload(chatDataset(10));
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

  it('lists events and checkpoints in the internal shape', async () => {
    const { id } = await createJob();
    await runToEnd(openai(), id);

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
    expect(await openai().listEvents(id, { limit: 2 })).toMatchObject({ hasMore: true, data: [events.data[0], events.data[1]] });

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

  it("maps a provider 400 to a provider GatewayError with the provider's status, message and param", async () => {
    const err = await failure(openai().createJob({ model: 'gpt-4o-mini', trainingFile: 'file-missing', options: {} }), 'provider');
    expect(err).toMatchObject({ status: 400, message: 'OpenAI: invalid training_file: file-missing', param: 'training_file', type: 'provider_error' });
  });

  it('scrubs credentials a provider echoes back in an error message', async () => {
    fake.failNext('GET', '/v1/fine_tuning/jobs', 500, { times: 3, message: `bad key ${API_KEY}` });
    expect(await failure(openai().listJobs({}), 'provider')).toMatchObject({ status: 502, message: 'OpenAI: bad key [redacted]' });
  });

  it('retries a cancel (marked idempotent) answered 503', async () => {
    const { id } = await createJob();
    fake.failNext('POST', `/v1/fine_tuning/jobs/${id}/cancel`, 503);
    await expect(openai().cancelJob(id)).resolves.toMatchObject({ status: 'cancelled' });
    expect(requestsTo('POST', `/v1/fine_tuning/jobs/${id}/cancel`)).toHaveLength(2);
  });

  it('maps an unreachable provider to a provider 502', async () => {
    await fake.close();
    const err = await failure(openai({ http: { retries: 0 } }).getJob('ftjob-x'), 'provider');
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
      expect(await failure(client.listJobs({}))).toMatchObject({ kind: 'provider', status: 502 });
      expect(elsewhere).toEqual([]);
    } finally {
      await Promise.all([target, redirecting].map((server) => new Promise((resolve) => server.close(resolve))));
    }
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
