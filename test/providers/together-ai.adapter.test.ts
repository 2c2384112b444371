/**
 * The Together AI adapter against the fake Together: the adapter contract (test/support/provider-kit.ts)
 * and what only Together does: FileResponse mapping and validation after upload, the late purpose
 * sent chunked, what a create refuses and its training type and DPO, cancel_requested, job_error,
 * metrics events and checkpoints, the chat request as sent and an unknown model. What a create sends
 * and answers is checked through HTTP (client-mode and hosted files).
 */
import { ProviderRegistry, type ProviderClient } from '../../src/providers/registry';
import type { CreateJobInput } from '../../src/providers/types';
import { startFakeTogether, type FakeTogether } from '../fakes/together-server';
import { failure } from '../support/expect';
import { adapterContract, chatDataset as dataset, pieces, runToEnd, type ClientOptions } from '../support/provider-kit';

const API_KEY = 'tg-adapter-key-0123456789';
const BASE = 'meta-llama/Meta-Llama-3.1-8B-Instruct-Reference';

let fake: FakeTogether;

beforeEach(async () => {
  fake = await startFakeTogether({ apiKey: API_KEY, userId: 'acme', streamDelayMs: 20 });
});

afterEach(() => fake.close());

function together(options: ClientOptions = {}): ProviderClient {
  const registry = new ProviderRegistry({ GATEWAY_TOGETHER_BASE_URL: fake.url }, { baseDelayMs: 1, timeoutMs: 5_000, ...options.http });
  return registry.client('together-ai', { kind: 'headers', headers: { authorization: `Bearer ${API_KEY}`, ...options.headers } });
}

const example = (n: number) =>
  dataset(n + 1)
    .toString()
    .trimEnd()
    .split('\n')[n];

async function upload(
  content = dataset(),
  purpose: string | Promise<string> = 'fine-tune',
  bytes: number | undefined = content.length,
  filename = 'träin.jsonl',
) {
  return together().uploadFile({ filename, purpose, bytes, open: () => pieces(content) });
}

async function createJob(extra: Partial<CreateJobInput> = {}) {
  return together().createJob({ model: BASE, trainingFile: extra.trainingFile ?? (await upload()).id, options: {}, ...extra });
}

const supervised = (hyperparameters: object) => ({ type: 'supervised' as const, hyperparameters });
const requestsTo = (method: string, path: string) => fake.state.requests.filter((r) => r.method === method && r.path === path);

adapterContract('together-ai', {
  client: together,
  fake: () => fake,
  files: {
    upload: (n, filename) => upload(dataset(n), 'fine-tune', undefined, filename),
    content: (_file, n) => dataset(n),
    uploadPath: '/v1/files/upload',
    lastPageCursor: 'last id',
  },
  jobs: {
    create: createJob,
    statuses: ['queued', 'running', 'running', 'running', 'running', 'succeeded'],
    createPath: '/v1/fine-tunes',
    listPath: '/v1/fine-tunes',
    unknown: { id: 'ft-missing', code: 'not_found' },
    cancelledAs: 'running',
    cancelRefusal: { message: /already finished/ },
    refused: [
      ['a learning-rate multiplier', { method: supervised({ learningRateMultiplier: 2 }) }, 'method.supervised.hyperparameters.learningRateMultiplier'],
      ['a legacy multiplier', { method: supervised({ learningRateMultiplier: 2 }), legacyHyperparameters: true }, 'hyperparameters.learningRateMultiplier'],
      ['another training type', { options: { trainingType: 'qlora' } }, 'providerOptions.trainingType'],
      ["another provider's option", { options: { roleArn: 'arn:aws:iam::1:role/x' } }, 'providerOptions.roleArn'],
      ['metadata (client mode)', { metadata: { team: 'a' } }, 'metadata'],
    ],
    failed: { fail: (id, reason) => fake.failJob(id, reason), code: 'job_error' },
  },
  settings: { required: 'authorization', hostile: [] },
  wrongCredentials: { headers: { authorization: 'Bearer tg-wrong-key-987654' }, secret: 'tg-wrong-key-987654', status: 401, code: 'invalid_api_key' },
  chat: { model: BASE, abandonedStreams: () => fake.state.abandonedStreams },
});

describe('together-ai files', () => {
  it('streams a multipart /files/upload with the exact Content-Length and maps the FileResponse', async () => {
    const content = dataset(7);
    const file = await upload(content);
    expect(file).toEqual({
      id: expect.stringMatching(/^file-/),
      bytes: content.length,
      createdAt: expect.any(Number),
      filename: 'träin.jsonl',
      purpose: 'fine-tune',
      status: 'uploaded',
      providerStatus: 'PENDING',
      statusDetails: null,
    });
    expect(fake.state.fileContents.get(file.id)?.equals(content)).toBe(true);
    const [req] = requestsTo('POST', '/v1/files/upload');
    expect(req.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(req.headers['transfer-encoding']).toBeUndefined();
    expect(Number(req.headers['content-length'])).toBeGreaterThan(content.length);
    // Together validates fine-tune files after the upload: each read moves its validation on.
    expect(await together().getFile(file.id)).toMatchObject({ status: 'uploaded', providerStatus: 'RUNNING' });
    expect(await together().getFile(file.id)).toMatchObject({ status: 'processed', statusDetails: null });
  });

  it('sends a purpose learnt only after the file behind it, the body chunked', async () => {
    let learn!: (purpose: string) => void;
    const purpose = new Promise<string>((resolve) => (learn = resolve));
    const content = dataset(3);
    const uploading = together().uploadFile({ filename: 'late.jsonl', purpose, open: () => pieces(content).on('end', () => learn('fine-tune')) });
    const file = await uploading;
    expect(file).toMatchObject({ filename: 'late.jsonl', purpose: 'fine-tune', bytes: content.length });
    const [req] = requestsTo('POST', '/v1/files/upload');
    expect(req.headers['transfer-encoding']).toBe('chunked');
  });

  it('reports an invalid dataset as an errored file naming the line', async () => {
    const file = await upload(Buffer.from(`${example(1)}\n{"messages": "nope"}\n`));
    await together().getFile(file.id);
    expect(await together().getFile(file.id)).toMatchObject({ status: 'error', statusDetails: expect.stringContaining('Line 2') });
  });

  it('refuses a stream that yields more bytes than declared, as our failure', async () => {
    const err = await failure(together().uploadFile({ filename: 'x.jsonl', purpose: 'fine-tune', bytes: 3, open: () => pieces(dataset(1)) }));
    expect(err).toMatchObject({ kind: 'internal', message: expect.stringMatching(/yielded \d+ bytes, expected 3/) });
    expect(fake.state.files.size).toBe(0);
  });

  it('lists files in upload order when asked ascending, filters by purpose, refuses an unknown cursor', async () => {
    const ids = [(await upload(dataset(1))).id, (await upload(dataset(2))).id];
    expect((await together().listFiles({ order: 'asc' })).data.map((f) => f.id)).toEqual(ids);
    expect((await together().listFiles({ purpose: 'batch-api' })).data).toEqual([]);
    expect(await failure(together().listFiles({ after: 'file-unknown' }))).toMatchObject({ status: 400, code: 'invalid_cursor' });
  });
});

describe('together-ai fine-tuning jobs', () => {
  it('asks for full fine-tuning and DPO with its beta when told, LoRA otherwise', async () => {
    await createJob({ options: { trainingType: 'Full' }, method: { type: 'dpo', hyperparameters: { beta: 0.2, nEpochs: 'auto' } } });
    expect(fake.state.fineTuneRequests.at(-1)).toMatchObject({ training_type: { type: 'Full' }, training_method: { method: 'dpo', dpo_beta: 0.2 } });
    expect(fake.state.fineTuneRequests.at(-1)).not.toHaveProperty('n_epochs');
    const lora = await createJob({ options: { trainingType: 'lora' } });
    expect(fake.state.fineTuneRequests.at(-1)).not.toHaveProperty('training_type');
    expect(fake.state.jobs.get(lora.id)?.training_type).toMatchObject({ type: 'Lora' });
  });

  it('maps events (stable ids), metrics events and checkpoints newest first, paged by id', async () => {
    await fake.close();
    fake = await startFakeTogether({ apiKey: API_KEY, userId: 'acme' });
    const file = await upload(dataset(4));
    const { id } = await together().createJob({
      model: BASE,
      trainingFile: file.id,
      method: { type: 'supervised', hyperparameters: { nEpochs: 2 } },
      options: {},
    });
    fake.state.jobs.get(id)!.n_checkpoints = 2;
    await runToEnd(together(), id);

    const events = await together().listEvents(id, {});
    expect(events.hasMore).toBe(false);
    expect(events.data[0]).toEqual({
      id: expect.stringMatching(/^ftevent-[0-9a-f]{24}$/),
      createdAt: expect.any(Number),
      level: 'info',
      message: expect.stringMatching(/^Job finished: acme\//),
      type: 'message',
      data: { type: 'job_complete', step: expect.any(Number), model_path: expect.any(String) },
    });
    expect(events.data.at(-1)).toMatchObject({ message: 'Fine tune request created', data: { type: 'job_pending' } });
    const metrics = events.data.filter((e) => e.type === 'metrics');
    expect(metrics.map((e) => e.id)).toEqual(['ftevent-metrics-step-2', 'ftevent-metrics-step-1']);
    expect(metrics[0]).toMatchObject({ message: expect.stringMatching(/^Step 2: train\/loss=0\.5, /), data: { step: 2, 'train/loss': 0.5, 'train/epoch': 2 } });
    const page = await together().listEvents(id, { limit: 3 });
    expect(page).toMatchObject({ hasMore: true, nextAfter: events.data[2].id });
    expect((await together().listEvents(id, { after: page.nextAfter ?? undefined, limit: 3 })).data).toEqual(events.data.slice(3, 6));

    const checkpoints = await together().listCheckpoints(id, {});
    const checkpoint = (step: number) => ({ id: `${id}:${step}`, fineTunedModelCheckpoint: `${id}:${step}`, stepNumber: step, fineTuningJobId: id });
    expect(checkpoints.data).toEqual(
      [2, 1].map((step) => ({
        ...checkpoint(step),
        createdAt: expect.any(Number),
        metrics: expect.objectContaining({ 'train/epoch': step, 'train/loss': expect.any(Number) }),
      })),
    );
  });
});

describe('together-ai chat', () => {
  const messages = [{ role: 'user' as const, content: 'Say hi' }];

  it('answers a chat completion, sending max_completion_tokens as max_tokens', async () => {
    const answer = await together().chat({
      model: BASE,
      body: { model: BASE, messages, stream: false, max_completion_tokens: 20, temperature: 0.5 },
      hosted: false,
      signal: new AbortController().signal,
    });
    expect(answer).toEqual({
      stream: false,
      completion: {
        id: expect.any(String),
        model: BASE,
        created: expect.any(Number),
        choices: [{ index: 0, content: `Answer from ${BASE}: Say hi`, refusal: null, toolCalls: [], finishReason: 'stop', logprobs: null }],
        usage: expect.objectContaining({ totalTokens: expect.any(Number) }),
      },
    });
    expect(fake.state.chatRequests.at(-1)).toEqual({ model: BASE, messages, stream: false, max_tokens: 20, temperature: 0.5 });
  });

  it('answers an unknown model with the provider 404', async () => {
    const err = await failure(
      together().chat({ model: 'nobody/nothing', body: { model: 'nobody/nothing', messages }, hosted: false, signal: new AbortController().signal }),
    );
    expect(err).toMatchObject({ kind: 'provider', status: 404, code: 'model_not_available' });
  });
});
