/**
 * The Fireworks AI adapter against the fake Fireworks: the adapter contract (test/support/provider-kit.ts)
 * and what only Fireworks does: datasets (create + streamed `:upload`, spooled when the size is
 * unknown, cleaned up on failure, listed without their size), the output model named after the
 * suffix, synthesised events and checkpoints. What a job create sends, the account's 403, the
 * signed-URL content and chat on a deployment are checked through HTTP (client-mode and hosted files).
 */
import type { HttpPolicy } from '../../src/providers/http';
import { ProviderRegistry, type ProviderClient } from '../../src/providers/registry';
import type { CreateJobInput } from '../../src/providers/types';
import { startFakeFireworks, type FakeFireworks } from '../fakes/fireworks-server';
import { failure } from '../support/expect';
import { adapterContract, chatDataset as dataset, pieces, runToEnd } from '../support/provider-kit';

const API_KEY = 'fw-adapter-key-0123456789';
const ACCOUNT = 'acme-labs';
const BASE = 'llama-v3p1-8b-instruct';
const BASE_NAME = `accounts/fireworks/models/${BASE}`;

let fake: FakeFireworks;

beforeEach(async () => {
  fake = await startFakeFireworks({ apiKey: API_KEY, accountId: ACCOUNT, runningPolls: 2, streamDelayMs: 20 });
});

afterEach(() => fake.close());

function fireworks(headers: Record<string, string | undefined> = {}, http: HttpPolicy = {}): ProviderClient {
  const registry = new ProviderRegistry({ GATEWAY_FIREWORKS_BASE_URL: fake.origin }, { baseDelayMs: 1, timeoutMs: 5_000, ...http });
  const all = { authorization: `Bearer ${API_KEY}`, 'x-gateway-fireworks-account-id': ACCOUNT, ...headers };
  return registry.client('fireworks-ai', { kind: 'headers', headers: all });
}

const upload = (content = dataset(), filename = 'Träin Set.jsonl') =>
  fireworks().uploadFile({ filename, purpose: 'fine-tune', bytes: content.length, open: () => pieces(content) });

async function createJob(extra: Partial<CreateJobInput> = {}) {
  return fireworks().createJob({ model: BASE, trainingFile: extra.trainingFile ?? (await upload()).id, options: {}, ...extra });
}

const supervised = (hyperparameters: object) => ({ type: 'supervised' as const, hyperparameters });
const controlPath = (rest: string) => `/v1/accounts/${ACCOUNT}/${rest}`;
const requestsTo = (method: string, path: string) => fake.state.requests.filter((r) => r.method === method && r.path === path);

adapterContract('fireworks-ai', {
  client: (options = {}) => fireworks(options.headers, options.http),
  fake: () => fake,
  files: {
    upload: (n, filename) => upload(dataset(n), filename),
    content: (_file, n) => dataset(n),
    uploadPath: controlPath('datasets'),
    lastPageCursor: 'none',
  },
  jobs: {
    create: createJob,
    statuses: ['validating_files', 'running', 'running', 'running', 'succeeded'],
    createPath: controlPath('supervisedFineTuningJobs'),
    listPath: controlPath('supervisedFineTuningJobs'),
    unknown: { id: 'nope' },
    cancelledAs: null,
    refused: [
      ['a learning-rate multiplier', { method: supervised({ learningRateMultiplier: 0.5 }) }, 'method.supervised.hyperparameters.learningRateMultiplier'],
      ['a legacy multiplier', { method: supervised({ learningRateMultiplier: 2 }), legacyHyperparameters: true }, 'hyperparameters.learningRateMultiplier'],
      ['DPO', { method: { type: 'dpo', hyperparameters: {} } }, 'method.type'],
      ['another training type', { options: { trainingType: 'full' } }, 'providerOptions.trainingType'],
      ['metadata', { metadata: { team: 'a' } }, 'metadata'],
      ['a seed', { seed: 3 }, 'seed'],
    ],
    failed: { fail: (id, reason) => fake.failJob(id, reason), code: 'INVALID_ARGUMENT' },
    findsHosted: true,
  },
  settings: {
    required: 'x-gateway-fireworks-account-id',
    hostile: ['evil.com/x', 'a@b', 'a:1', 'a.b', 'a%2fb', 'Upper', '-dash', 'x'.repeat(64)].map((value) => ['x-gateway-fireworks-account-id', value]),
  },
  wrongCredentials: { headers: { authorization: 'Bearer fw-wrong-key-987654' }, secret: 'fw-wrong-key-987654', status: 401 },
  chat: { model: BASE_NAME, abandonedStreams: () => fake.state.abandonedStreams },
});

describe('fireworks-ai datasets', () => {
  it('creates a dataset and streams a small file through :upload with the exact length; the dataset id is the file id', async () => {
    const content = dataset(6);
    const file = await upload(content);
    expect(file).toEqual({
      id: expect.stringMatching(/^tr-in-set-[0-9a-f]{8}$/),
      bytes: content.length,
      createdAt: expect.any(Number),
      filename: 'Träin Set.jsonl',
      purpose: 'fine-tune',
      status: 'processed',
      statusDetails: null,
    });
    expect(fake.state.datasets.get(file.id)).toMatchObject({ state: 'READY', displayName: 'Träin Set.jsonl', exampleCount: '6' });
    expect(fake.state.datasetFiles.get(file.id)?.get('Träin Set.jsonl')).toEqual({ content, via: 'upload' });
    const [req] = requestsTo('POST', controlPath(`datasets/${file.id}:upload`));
    expect(req.headers['content-length']).toBeDefined();
    expect(req.headers.authorization).toBe(`Bearer ${API_KEY}`);
  });

  it('spools an upload of unknown size whose purpose comes last, then sends its exact bytes', async () => {
    let learn!: (purpose: string) => void;
    const purpose = new Promise<string>((resolve) => (learn = resolve));
    const content = dataset(4);
    const file = await fireworks().uploadFile({ filename: 'late.jsonl', purpose, open: () => pieces(content).on('end', () => learn('fine-tune')) });
    expect(file).toMatchObject({ bytes: content.length, status: 'processed' });
    expect(fake.state.datasetFiles.get(file.id)?.get('late.jsonl')?.content?.equals(content)).toBe(true);
    const [req] = requestsTo('POST', controlPath(`datasets/${file.id}:upload`));
    expect(req.headers['transfer-encoding']).toBeUndefined();
  });

  it('refuses a purpose other than fine-tune or batch before creating anything', async () => {
    const err = await failure(fireworks().uploadFile({ filename: 'b.jsonl', purpose: 'assistants', bytes: 3, open: () => pieces(Buffer.from('abc')) }));
    expect(err).toMatchObject({ kind: 'invalid_request', path: ['purpose'] });
    expect(fake.state.datasets.size).toBe(0);
  });

  it("relays Fireworks' refusal of an invalid dataset and deletes the half-made dataset", async () => {
    const err = await failure(upload(dataset(2)));
    expect(err).toMatchObject({ kind: 'provider', status: 400, message: expect.stringContaining('at least 3') });
    expect(fake.state.datasets.size).toBe(0);
  });

  it('lists datasets newest first by createTime (no size in a listing), and in creation order when asked', async () => {
    const ids = [(await upload(dataset(3), 'set-3.jsonl')).id];
    await new Promise((resolve) => setTimeout(resolve, 5));
    ids.push((await upload(dataset(4), 'set-4.jsonl')).id);
    expect((await fireworks().listFiles({})).data[0]).toMatchObject({
      id: ids[1],
      filename: 'set-4.jsonl',
      purpose: 'fine-tune',
      status: 'processed',
      bytes: 0,
    });
    expect((await fireworks().listFiles({ order: 'asc' })).data.map((f) => f.id)).toEqual(ids);
    expect(requestsTo('GET', controlPath('datasets'))[0].query.get('orderBy')).toBe('createTime desc');
  });
});

describe('fireworks-ai fine-tuning jobs', () => {
  it('names the output model after the suffix, slugged, with a unique tail; the display name is the suffix', async () => {
    const { id } = await createJob({ suffix: 'My Run' });
    expect(fake.state.jobs.get(id)).toMatchObject({
      displayName: 'My Run',
      outputModel: expect.stringMatching(new RegExp(`^accounts/${ACCOUNT}/models/my-run-[0-9a-f]{8}$`)),
    });
  });

  it('synthesises events with stable ids (progress as metrics) and the output model as checkpoint', async () => {
    const { id } = await createJob({ method: { type: 'supervised', hyperparameters: { nEpochs: 3 } } });
    // The fake moves a job on at every read, the events' own read included.
    const validating = await fireworks().listEvents(id, {});
    expect(validating.data.map((e) => e.id)).toEqual([`${id}-state-job_state_validating`, `${id}-created`]);
    expect(validating.data[1]).toMatchObject({
      type: 'message',
      message: `Fine-tuning job created: ${BASE_NAME} on accounts/${ACCOUNT}/datasets/${fake.state.jobs.get(id)!.dataset.split('/').pop()}`,
    });
    const running = await fireworks().listEvents(id, {});
    expect(running.data.map((e) => e.id)).toEqual([`${id}-progress-50`, `${id}-state-job_state_running`, `${id}-created`]);
    expect(running.data[0]).toMatchObject({ type: 'metrics', message: expect.stringMatching(/^Training 50% done/), data: { percent: 50, epoch: 1 } });
    expect((await fireworks().listCheckpoints(id, {})).data).toEqual([]);

    await runToEnd(fireworks(), id);
    const done = await fireworks().listEvents(id, {});
    expect(done.data.map((e) => e.id)).toEqual([`${id}-state-job_state_completed`, `${id}-progress-100`, `${id}-created`]);
    const output = fake.state.jobs.get(id)!.outputModel;
    expect(done.data[0]).toMatchObject({
      level: 'info',
      message: `Job completed: output model ${output}`,
      type: 'message',
      data: { state: 'JOB_STATE_COMPLETED' },
    });

    const checkpoints = await fireworks().listCheckpoints(id, {});
    expect(checkpoints.data).toEqual([
      {
        id: `${id}-output-model`,
        createdAt: expect.any(Number),
        fineTunedModelCheckpoint: output,
        stepNumber: 3,
        metrics: expect.objectContaining({ percent: 100 }),
        fineTuningJobId: id,
      },
    ]);
  });
});
