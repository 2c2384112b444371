/**
 * The Vertex AI adapter against the fake Google Cloud: the adapter contract (test/support/provider-kit.ts)
 * and what only Vertex does: datasets converted line by line into Gemini's format as they stream to
 * Cloud Storage; files as gs:// objects, only under the gateway's prefix; tuning jobs created from
 * the OpenAI-shaped input, with the tuned model's endpoint, and found by their label; events and
 * checkpoints read off the job; hyperparameters Vertex cannot take refused; Google's errors mapped.
 */
import { Readable } from 'node:stream';
import type { CreateJobInput, ProviderFile } from '../../src/providers/types';
import { startFakeVertex, type FakeVertex } from '../fakes/vertex-server';
import { failure as gatewayError } from '../support/expect';
import { adapterContract } from '../support/provider-kit';
import { BUCKET, examplePair, openaiDataset, vertexClient } from './vertex-ai.support';

let fake: FakeVertex;

beforeEach(async () => {
  fake = await startFakeVertex({ streamDelayMs: 20 });
});

afterEach(() => fake.close());

const vertex = () => vertexClient(fake);
const objects = () => fake.state.storage.buckets.get(BUCKET)!;
const objectOf = (file: ProviderFile) => objects().get(file.id.slice(`gs://${BUCKET}/`.length));
const jobsPath = () => `/v1/projects/${fake.projectId}/locations/${fake.location}/tuningJobs`;

/** Uploads `content` as a stream of small chunks, the way a client's upload arrives. */
function upload(content: string, purpose: string | Promise<string> = 'fine-tune', filename = 'träin.jsonl') {
  const chunks = Buffer.from(content)
    .toString('base64')
    .match(/.{1,40}/g)!
    .map((b) => Buffer.from(b, 'base64'));
  return vertex().uploadFile({ filename, purpose, open: () => Readable.from(chunks) });
}

async function createJob(extra: Partial<CreateJobInput> = {}) {
  const trainingFile = extra.trainingFile ?? (await upload(openaiDataset(3))).id;
  return vertex().createJob({ model: 'gemini-2.0-flash-001', trainingFile, options: {}, ...extra });
}

adapterContract('vertex-ai', {
  client: (options) => vertexClient(fake, options),
  fake: () => fake,
  files: {
    upload: (n, filename) => upload(openaiDataset(n), 'fine-tune', filename),
    content: (file) => objectOf(file)!.data,
    uploadPath: `/upload/storage/v1/b/${BUCKET}/o`,
    lastPageCursor: 'none',
    readsAsUploaded: true,
    putForeign: () => fake.putObject(BUCKET, 'elsewhere/not-ours.jsonl', 'x'),
  },
  jobs: {
    create: createJob,
    statuses: ['running', 'succeeded'],
    get createPath() {
      return jobsPath();
    },
    get listPath() {
      return jobsPath();
    },
    get unknown() {
      return { id: `${jobsPath().slice('/v1/'.length)}/123`, code: 'NOT_FOUND' };
    },
    cancelledAs: 'cancelled',
    cancelRefusal: { code: 'FAILED_PRECONDITION' },
    refused: [
      ['a batch size for a Gemini model', { method: { type: 'supervised', hyperparameters: { batchSize: 8 } } }, 'method.supervised.hyperparameters.batchSize'],
      ['a legacy batch size', { method: { type: 'supervised', hyperparameters: { batchSize: 4 } }, legacyHyperparameters: true }, 'hyperparameters.batchSize'],
      ['DPO', { method: { type: 'dpo', hyperparameters: {} } }, 'method.type'],
      ['an absolute learning rate for a Gemini model', { options: { learningRate: 0.0001 } }, 'providerOptions.learningRate'],
      ["another provider's option", { options: { roleArn: 'arn:aws:iam::1:role/x' } }, 'providerOptions.roleArn'],
      ['metadata that cannot be a label', { metadata: { Team: 'Search Team' } }, 'metadata'],
      ['a training file that is no gs:// URI', { trainingFile: 'file-abc' }, 'trainingFile'],
    ],
    failed: { fail: (id, message) => fake.failJob(id, { code: 3, message }), code: 'invalid_argument', event: (reason) => `Tuning failed: ${reason}` },
    findsHosted: true,
  },
  settings: {
    required: 'x-gateway-vertex-service-account-json',
    hostile: [], // through the route: test/client-mode/vertex-ai.test.ts
  },
  get wrongCredentials() {
    const stranger = fake.unknownServiceAccount();
    return { headers: { 'x-gateway-vertex-service-account-json': JSON.stringify(stranger) }, secret: stranger.private_key, status: 400, code: 'invalid_grant' };
  },
  chat: { model: 'gemini-2.5-flash', abandonedStreams: () => fake.state.abortedStreams },
});

describe('Vertex AI files', () => {
  // Converted while streaming, in many small chunks (the client-mode pass checks the lines and the multipart upload).
  it('converts unicode lines into Gemini format, naming the object after the filename made safe', async () => {
    const file = await upload(openaiDataset(2));
    expect(file).toMatchObject({ filename: 'träin.jsonl', purpose: 'fine-tune', bytes: objectOf(file)!.data.length, status: 'processed', statusDetails: null });
    expect(file.id).toMatch(new RegExp(`^gs://${BUCKET}/gateway-files/\\d{13}-[0-9a-f]{12}-tr_in\\.jsonl$`));
    expect(objectOf(file)!.data.toString()).toBe([1, 2].map((n) => `${JSON.stringify(examplePair(n).gemini)}\n`).join(''));
  });

  it('refuses a purpose other than fine-tune or batch, also one that arrives after the file (removing the object again)', async () => {
    expect(await gatewayError(upload(openaiDataset(2), 'assistants'))).toMatchObject({ status: 400, path: ['purpose'] });
    expect(fake.state.requests).toHaveLength(0);
    expect(await gatewayError(upload(openaiDataset(2), Promise.resolve('vision')))).toMatchObject({ status: 400, path: ['purpose'] });
    expect(objects().size).toBe(0);
  });

  it("answers 404 without a call for an object outside the gateway's prefix or bucket", async () => {
    fake.putObject(BUCKET, 'elsewhere/secret.jsonl', 'x');
    for (const id of [`gs://${BUCKET}/elsewhere/secret.jsonl`, 'gs://other-bucket/gateway-files/x', 'file-abc', `gs://${BUCKET}`]) {
      expect(await gatewayError(vertex().deleteFile(id))).toMatchObject({ kind: 'not_found', status: 404 });
    }
    expect(fake.state.requests).toHaveLength(0);
    expect(objects().has('elsewhere/secret.jsonl')).toBe(true);
  });

  it('refuses ascending order, which Cloud Storage cannot page in', async () => {
    expect(await gatewayError(vertex().listFiles({ order: 'asc' }))).toMatchObject({ status: 400, path: ['order'] });
  });
});

describe('Vertex AI tuning jobs', () => {
  it('creates a job with a validation file and the gateway job id as a label (found by it), read by its numeric id while running', async () => {
    const file = await upload(openaiDataset(3));
    const gatewayJobId = '0f8fad5b-d9cb-469f-a165-70867728950e';
    const created = await vertex().createJob({
      model: 'gemini-2.0-flash-001',
      trainingFile: file.id,
      validationFile: file.id,
      seed: 42,
      options: {},
      gatewayJobId,
    });
    expect(fake.state.createJobRequests).toEqual([
      {
        baseModel: 'gemini-2.0-flash-001',
        labels: { gateway_job_id: gatewayJobId },
        supervisedTuningSpec: { trainingDatasetUri: file.id, validationDatasetUri: file.id },
      },
    ]);
    expect(created).toMatchObject({ status: 'queued', trainingFile: file.id, validationFile: file.id, metadata: { gateway_job_id: gatewayJobId } });
    expect(Math.abs(created.createdAt - Date.now() / 1000)).toBeLessThan(60);
    const running = await vertex().getJob(created.id.split('/').at(-1)!);
    expect(running).toMatchObject({ id: created.id, status: 'running', trainedTokens: expect.any(Number), fineTunedModel: null });
    await vertex().getJob(created.id);
    const events = await vertex().listEvents(created.id, {});
    expect(await vertex().listEvents(created.id, {})).toEqual(events); // stable times too
    expect((await vertex().listEvents(created.id, { after: events.data[0].id, limit: 1 })).nextAfter).toBe(events.data[1].id);
    expect(await gatewayError(vertex().listCheckpoints(created.id, { after: 'nope' }))).toMatchObject({ status: 400, code: 'invalid_cursor' });
    expect(await vertex().findJob(gatewayJobId)).toMatchObject({ id: created.id });
    expect(fake.state.requests.at(-1)?.query.get('filter')).toBe(`labels.gateway_job_id="${gatewayJobId}"`);
  });

  it('keeps OpenAI chat lines as they are for an open model (meta/…), and sends it its batch size and absolute learning rate', async () => {
    const [content, model] = [openaiDataset(2), 'meta/llama3_1@llama-3.1-8b'];
    const file = await vertex().uploadFile({ filename: 'llama.jsonl', purpose: 'fine-tune', model, open: () => Readable.from([content]) });
    expect(objectOf(file)!.data.toString()).toBe(content);
    const method = { type: 'supervised' as const, hyperparameters: { nEpochs: 1, batchSize: 8 } };
    const err = await gatewayError(vertex().createJob({ model, trainingFile: file.id, method, options: { learningRate: 0.0002 } }));
    // The fake tunes Gemini models only; what matters is what was asked of it.
    expect(err).toMatchObject({ kind: 'provider', status: 400, code: 'INVALID_ARGUMENT' });
    expect(fake.state.createJobRequests[0]).toMatchObject({ supervisedTuningSpec: { hyperParameters: { epochCount: 1, batchSize: 8, learningRate: 0.0002 } } });
  });
});

describe('Vertex AI errors', () => {
  // Its status name as the code: the adapter contract's unknown job.
  it("keeps Google's error message; a job id of another form is 404 without a call", async () => {
    const err = await gatewayError(vertex().getJob(`${jobsPath().slice('/v1/'.length)}/123`));
    expect(err).toMatchObject({ kind: 'provider', status: 404, message: expect.stringMatching(/tuningJobs\/123 does not exist/) });
    expect(await gatewayError(vertex().getJob('ftjob-abc'))).toMatchObject({ kind: 'not_found', status: 404 });
  });

  it('relays a create answered 429 RESOURCE_EXHAUSTED, without retrying it', async () => {
    const file = await upload(openaiDataset(2));
    fake.failNext('POST', jobsPath(), 429);
    const err = await gatewayError(vertex().createJob({ model: 'gemini-2.0-flash-001', trainingFile: file.id, options: {} }));
    expect(err).toMatchObject({ kind: 'provider', status: 429, code: 'RESOURCE_EXHAUSTED' });
    expect(fake.state.requests.filter((r) => r.method === 'POST' && r.path === jobsPath())).toHaveLength(1);
  });

  it("maps Cloud Storage's 5xx to 502", async () => {
    fake.failNext('GET', `/storage/v1/b/${BUCKET}/o`, 503, { times: 3 });
    expect(await gatewayError(vertex().listFiles({}))).toMatchObject({ kind: 'provider', status: 502 });
  });
});
