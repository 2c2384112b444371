/**
 * The Bedrock adapter against the fake Bedrock (S3, control plane, runtime): the adapter contract
 * (test/support/provider-kit.ts) with what Bedrock does its own way: files are S3 objects listed
 * in key order (oldest first), a create carries an idempotency token (so a 5xx is retried), a wrong
 * secret is a 403, a stopped job reads `cancelled` once Bedrock has stopped it, objects outside the
 * gateway's prefix are not listed, and what Bedrock cannot take is refused before any request. Datasets, jobs
 * and chat as only Bedrock has them are in bedrock.files, bedrock.jobs and bedrock.chat.
 */
import { Readable } from 'node:stream';
import { startFakeBedrock, type FakeBedrock } from '../fakes/bedrock-server';
import { adapterContract, chatDataset, severalServers } from '../support/provider-kit';
import { bedrock, CLAUDE, DEFAULT_BUCKET, NOVA } from './bedrock-harness';

let fake: FakeBedrock;

beforeEach(async () => {
  fake = await startFakeBedrock({ streamDelayMs: 20 });
});

afterEach(() => fake.close());

const supervised = (hyperparameters: object) => ({ type: 'supervised' as const, hyperparameters });

const upload = (examples: number, filename: string) =>
  bedrock(fake).uploadFile({ filename, purpose: 'fine-tune', model: NOVA, open: () => Readable.from([chatDataset(examples)]) });

adapterContract('bedrock', {
  client: (options) => bedrock(fake, options),
  fake: () =>
    severalServers(
      [
        [`/${DEFAULT_BUCKET}/`, { ...fake.s3, requests: fake.s3.state.requests }],
        ['/model/', fake.runtime],
      ],
      fake.control,
    ),
  files: {
    upload,
    content: (file) => fake.s3.getObject(DEFAULT_BUCKET, file.id.slice(`s3://${DEFAULT_BUCKET}/`.length))!,
    uploadPath: `/${DEFAULT_BUCKET}/`,
    uploadPut: true,
    lastPageCursor: 'none',
    order: 'oldest first',
    putForeign: () => fake.s3.putObject(DEFAULT_BUCKET, 'elsewhere/other.jsonl', 'not listed'),
    notFoundCode: 'NoSuchKey',
    readsAsUploaded: true,
    sizedContent: true,
  },
  jobs: {
    create: async (extra = {}) =>
      bedrock(fake).createJob({ model: NOVA, trainingFile: extra.trainingFile ?? (await upload(12, 'train.jsonl')).id, options: {}, ...extra }),
    statuses: ['queued', 'running', 'succeeded'],
    createPath: '/model-customization-jobs',
    createRetried: true,
    listPath: '/model-customization-jobs',
    unknown: { id: 'no-such-job', code: 'ResourceNotFoundException' },
    cancelledAs: 'cancelled',
    cancelRefusal: { code: 'ValidationException', message: /cannot be stopped/ },
    refused: [
      ['DPO', { method: { type: 'dpo', hyperparameters: {} } }, 'method.type'],
      ['a multiplier for Nova', { method: supervised({ learningRateMultiplier: 2 }) }, 'method.supervised.hyperparameters.learningRateMultiplier'],
      ['a legacy multiplier', { method: supervised({ learningRateMultiplier: 2 }), legacyHyperparameters: true }, 'hyperparameters.learningRateMultiplier'],
      ['an absolute rate for Claude', { model: CLAUDE, options: { learningRate: 0.0001 } }, 'providerOptions.learningRate'],
      ['a suffix Bedrock cannot name a model with', { suffix: 'my.model' }, 'suffix'],
      ['a bad job name', { options: { jobName: 'bad name' } }, 'providerOptions.jobName'],
      ['a training file that is no S3 URI', { trainingFile: 'file-abc' }, 'trainingFile'],
      ['an output that is no S3 URI', { options: { outputFile: 'https://example.com/out' } }, 'providerOptions.outputFile'],
      ['another training type', { options: { trainingType: 'CONTINUED_PRE_TRAINING' } }, 'providerOptions.trainingType'],
      ['a bad role_arn', { options: { roleArn: 'arn:aws:iam::123:user/x' } }, 'providerOptions.roleArn'],
      ['a seed (client mode)', { seed: 1 }, 'seed'],
      ['metadata (client mode)', { metadata: { a: 'b' } }, 'metadata'],
    ],
    failed: { fail: (id, reason) => fake.failJob(id, reason), code: 'model_customization_failed', event: (reason) => `The job failed: ${reason}` },
    findsHosted: true,
  },
  settings: {
    required: ['x-gateway-aws-region', 'x-gateway-aws-secret-access-key'],
    // Hostile values: through HTTP in client-mode/bedrock.
    hostile: [],
  },
  wrongCredentials: {
    headers: { 'x-gateway-aws-secret-access-key': 'a-wrong-secret-value' },
    secret: 'a-wrong-secret-value',
    status: 403,
    code: 'InvalidSignatureException',
  },
  throttledCode: 'ThrottlingException',
  chat: { model: 'amazon.nova-lite-v1:0', abandonedStreams: () => fake.state.abandonedStreams },
});
