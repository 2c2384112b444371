/**
 * Bedrock model customization jobs through the registry's ProviderClient against the fake Bedrock:
 * what CreateModelCustomizationJob receives (string hyperparameters per model family, validators,
 * output beside the data), statuses refined by statusDetails, listed summaries, events and the
 * checkpoint made from the job and its metrics CSVs, and AWS errors relayed, credentials never echoed.
 * The adapter contract has the rest; a stopped job, the idempotency token and Bedrock's own refusals are
 * checked through HTTP (fine-tuning/bedrock-hosted, client-mode/bedrock).
 */
import type { ProviderClient } from '../../src/providers/registry';
import { failure } from '../support/expect';
import { startFakeBedrock, type FakeBedrock, type FakeBedrockOptions } from '../fakes/bedrock-server';
import { createdJob, runToEnd, type ClientOptions } from '../support/provider-kit';
import { bedrock, chatDataset, CLAUDE, DEFAULT_BUCKET, NOVA, ROLE_ARN, upload } from './bedrock-harness';

let fake: FakeBedrock;

async function start(options: FakeBedrockOptions = {}) {
  await fake?.close();
  fake = await startFakeBedrock(options);
}

beforeEach(() => start());
afterEach(() => fake.close());

const JOB_ARN = /^arn:aws:bedrock:us-east-1:123456789012:model-customization-job\/amazon\.nova-micro-v1:0:128k\/[a-z0-9]{12}$/;

/** A client and a Nova dataset uploaded with it. */
async function withDataset(options: ClientOptions = {}, model = NOVA): Promise<{ client: ProviderClient; training: string }> {
  const client = bedrock(fake, options);
  return { client, training: (await upload(client, chatDataset(12), model)).id };
}

const folderOf = (uri: string) => uri.slice(0, uri.lastIndexOf('/') + 1);

describe('creating and following a job', () => {
  it('sends Bedrock members (string hyperparameters, validators, output beside the data) and walks statusDetails to succeeded', async () => {
    const { client, training } = await withDataset();
    const validation = (await upload(client, chatDataset(4), NOVA, 'valid.jsonl')).id;
    const method = { type: 'supervised' as const, hyperparameters: { nEpochs: 2, batchSize: 4, learningRateMultiplier: 'auto' as const } };
    const created = await client.createJob({
      model: NOVA,
      trainingFile: training,
      validationFile: validation,
      suffix: 'my-model',
      method,
      options: { learningRate: 0.00001 },
    });
    expect(created).toEqual(
      createdJob({
        id: expect.stringMatching(JOB_ARN),
        status: 'validating_files',
        model: NOVA,
        hyperparameters: { nEpochs: 2, batchSize: 4 },
        method: { type: 'supervised', hyperparameters: { nEpochs: 2, batchSize: 4 } },
        trainingFile: training,
        validationFile: validation,
        suffix: 'my-model',
        organizationId: '123456789012',
      }),
    );
    expect(fake.state.createJobRequests).toEqual([
      {
        jobName: expect.stringMatching(/^gateway-[0-9a-f-]{36}$/),
        customModelName: 'my-model',
        roleArn: ROLE_ARN,
        baseModelIdentifier: NOVA,
        customizationType: 'FINE_TUNING',
        trainingDataConfig: { s3Uri: training },
        validationDataConfig: { validators: [{ s3Uri: validation }] },
        outputDataConfig: { s3Uri: `${folderOf(training)}bedrock-output/` },
        hyperParameters: { epochCount: '2', batchSize: '4', learningRate: '0.00001' },
        clientRequestToken: expect.any(String),
      },
    ]);

    expect(await runToEnd(client, created.id)).toEqual(['queued', 'running', 'succeeded']);
    const job = await client.getJob(created.id);
    const remote = fake.state.jobs.get(created.id)!;
    expect(job).toMatchObject({
      fineTunedModel: remote.outputModelArn,
      finishedAt: Math.floor(remote.endTime!.getTime() / 1000),
      createdAt: Math.floor(remote.creationTime.getTime() / 1000),
      hyperparameters: { nEpochs: 2, batchSize: 4 },
      model: NOVA,
      trainingFile: training,
      validationFile: validation,
      error: null,
    });
    // The result files are the metrics CSVs, readable as files of the bucket.
    expect(job.resultFiles).toHaveLength(2);
    const csv = await client.fileContent(job.resultFiles[0]);
    let text = '';
    for await (const chunk of csv.stream) text += chunk;
    expect(text.split('\n')[0]).toBe('step_number,epoch_number,training_loss,perplexity');
  });

  it('sends learningRateMultiplier for Claude, a job name and output of the caller, and role_arn over the header', async () => {
    const { client, training } = await withDataset({}, CLAUDE);
    const role = 'arn:aws:iam::123456789012:role/Other';
    const method = { type: 'supervised' as const, hyperparameters: { learningRateMultiplier: 0.5 } };
    const options = { roleArn: role, jobName: 'my.job-1', outputFile: `s3://${DEFAULT_BUCKET}/out/` };
    await client.createJob({ model: CLAUDE, trainingFile: training, method, options });
    expect(fake.state.createJobRequests[0]).toMatchObject({
      jobName: 'my.job-1',
      roleArn: role,
      hyperParameters: { learningRateMultiplier: '0.5' },
      outputDataConfig: { s3Uri: `s3://${DEFAULT_BUCKET}/out/` },
      customModelName: expect.stringMatching(/^gateway-[0-9a-f-]{36}$/),
    });
    expect(fake.state.createJobRequests[0]).not.toHaveProperty('validationDataConfig');
  });

  it('maps listed jobs from the summaries Bedrock lists (no training file in them)', async () => {
    const { client, training } = await withDataset();
    const ids = [];
    for (let i = 0; i < 2; i++) ids.push((await client.createJob({ model: NOVA, trainingFile: training, suffix: `s${i}`, options: {} })).id);
    fake.advance(ids[0], 3);
    const { data } = await client.listJobs({});
    expect(data[0]).toMatchObject({ status: 'validating_files', suffix: 's1', model: NOVA, trainingFile: '' });
    expect(data[1]).toMatchObject({ status: 'succeeded', fineTunedModel: expect.stringContaining(':custom-model/') });
  });
});

describe('events, checkpoints and stopping', () => {
  beforeEach(() => start({ stepsPerPoll: 0 }));

  it('makes events from statusDetails transitions with ids that stay the same on every read', async () => {
    const { client, training } = await withDataset();
    const { id } = await client.createJob({ model: NOVA, trainingFile: training, options: {} });
    const early = await client.listEvents(id, {});
    fake.advance(id, 1);
    const later = await client.listEvents(id, {});
    expect(later.data.map((e) => e.message)).toEqual([
      'Data processing started',
      'Validation of the training data completed',
      'Validation of the training data started',
      expect.stringMatching(/^Created model customization job gateway-/),
    ]);
    expect(later.data.slice(2)).toEqual(early.data);
    expect(new Set(later.data.map((e) => e.id)).size).toBe(4);
    expect((await client.getJob(id)).status).toBe('queued');
  });

  it('gives a completed job metrics events per step and one checkpoint: the custom model', async () => {
    const { client, training } = await withDataset();
    const method = { type: 'supervised' as const, hyperparameters: { nEpochs: 2, batchSize: 4 } };
    const { id } = await client.createJob({ model: NOVA, trainingFile: training, validationFile: training, method, options: {} });
    expect((await client.listCheckpoints(id, {})).data).toEqual([]);
    const remote = fake.advance(id, 3);

    const all = await client.listEvents(id, { limit: 100 });
    const oldestFirst = [...all.data].reverse();
    const messages = oldestFirst.map((e) => e.message);
    expect(messages.slice(0, 6)).toEqual([
      expect.stringMatching(/^Created model customization job/),
      'Validation of the training data started',
      'Validation of the training data completed',
      'Data processing started',
      'Data processing completed',
      'Training started',
    ]);
    // 2 epochs of ceil(12 examples / batch 4) = 3 steps; validation at the end of each epoch.
    const metrics = oldestFirst.filter((e) => e.type === 'metrics');
    expect(metrics.map((e) => (e.data as { step: number }).step)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(metrics[2].data).toEqual({
      step: 2,
      epoch: 0,
      train_loss: expect.any(Number),
      train_perplexity: expect.any(Number),
      valid_loss: expect.any(Number),
      valid_perplexity: expect.any(Number),
    });
    expect(metrics[1].data).not.toHaveProperty('valid_loss');
    expect(messages.slice(-2)).toEqual(['Training completed', `The job has successfully completed: ${remote.outputModelArn}`]);

    expect(await client.listCheckpoints(id, {})).toEqual({
      data: [
        {
          id: expect.stringMatching(/^bedrock-[a-z0-9]{12}-model$/),
          createdAt: Math.floor(remote.endTime!.getTime() / 1000),
          fineTunedModelCheckpoint: remote.outputModelArn,
          stepNumber: 5,
          metrics: {
            train_loss: remote.trainingMetrics!.trainingLoss,
            train_perplexity: expect.any(Number),
            valid_loss: remote.validationMetrics![0].validationLoss,
          },
          fineTuningJobId: id,
        },
      ],
      hasMore: false,
      nextAfter: expect.any(String),
    });
  });

  it('stops a job: Stopping reads running, with its event (cancelled and its events: fine-tuning/bedrock-hosted)', async () => {
    const { client, training } = await withDataset();
    const { id } = await client.createJob({ model: NOVA, trainingFile: training, options: {} });
    expect(await client.cancelJob(id)).toMatchObject({ id, status: 'running', finishedAt: null });
    expect((await client.listEvents(id, {})).data[0].message).toBe('Stopping the job');
  });
});

describe('AWS errors (the contract has 404, 429, 5xx and the time-out)', () => {
  it.each([
    ['AccessDeniedException as 403', () => fake.control.failNext('GET', '/model-customization-jobs', 403), { status: 403, code: 'AccessDeniedException' }],
    [
      'a 5xx as 502 with its code',
      () => fake.control.failNext('GET', '/model-customization-jobs', 500, { times: 3 }),
      { status: 502, code: 'InternalServerException' },
    ],
    ['an unreachable endpoint as 502', () => fake.close(), { status: 502, message: expect.stringMatching(/^Could not reach Amazon Bedrock/) }],
  ])('relays %s', async (_what, inject, expected) => {
    await inject();
    expect(await failure(bedrock(fake, { http: { retries: 0 } }).listJobs({}), 'provider')).toMatchObject(expected);
  });

  it('answers a wrong secret with 403 and never echoes a credential, not even the session token AWS quotes back', async () => {
    const temporary = { accessKeyId: 'ASIAFAKETEMPORARY001', secretAccessKey: 'temporary-secret-value', sessionToken: 'session-token-of-the-test-0123' };
    await start({ credentials: [temporary] });
    const headers = {
      'x-gateway-aws-access-key-id': temporary.accessKeyId,
      'x-gateway-aws-secret-access-key': 'a-wrong-secret-value',
      'x-gateway-aws-session-token': temporary.sessionToken,
    };
    const err = await failure(bedrock(fake, { headers }).listJobs({}), 'provider');
    expect(err).toMatchObject({ status: 403, code: 'InvalidSignatureException' });
    expect(err.message).toContain('[redacted]');
    for (const secret of Object.values(headers)) expect(err.message).not.toContain(secret);
    expect(fake.state.sigv4.control.failures).toHaveLength(1);

    const right = bedrock(fake, { headers: { ...headers, 'x-gateway-aws-secret-access-key': temporary.secretAccessKey } });
    expect((await right.listJobs({})).data).toEqual([]);
  });
});
