/**
 * Hosted (provider-mode) fine-tuning jobs on a `fireworks-ai` integration, through the OpenAI SDK
 * and plain HTTP against the fake Fireworks: the job monitor uploads the dataset, creates the job
 * under an id derived from the gateway's, follows it to `succeeded` with the output model, and stores
 * the synthesised events and the output-model checkpoint once each. Fireworks has no cancel: a hosted
 * cancel ends the job `cancelled` with an event saying the Fireworks job keeps running, and the gateway
 * stops following it (nothing is deleted there).
 */
import { startFakeFireworks } from '../fakes/fireworks-server';
import { api } from '../support/gateway';
import { eventually } from '../support/expect';
import { chatOnDeployment, hostedOnFake } from '../support/hosted-kit';
import { dataset } from './harness';
import { openAIWireSent, toolRequestCase } from '../chat/sdk-suite';
import { gatewaySdk } from '../support/answers';

const KEY = 'fw-hosted-key-0123456789abcdef';
const ACCOUNT = 'acme-labs';
const BASE = 'llama-v3p1-8b-instruct';

/** The first test's succeeded job's output model, which the chat test then talks to. */
let tunedModel: string | undefined;

const hosted = hostedOnFake({
  start: () => startFakeFireworks({ apiKey: KEY, accountId: ACCOUNT, runningPolls: 3 }),
  env: (fake) => ({ GATEWAY_FIREWORKS_BASE_URL: fake.origin }),
  integrations: () => [
    {
      slug: 'my-fireworks',
      provider: 'fireworks-ai',
      name: 'Fireworks',
      credentials: { api_key: KEY },
      options: { 'x-gateway-fireworks-account-id': ACCOUNT },
    },
  ],
  model: BASE,
  dataset: dataset(),
});
const { createJob, waitForStatus, messagesOf } = hosted;

describe('hosted fine-tuning jobs on Fireworks AI', () => {
  it('uploads, submits and follows a job to succeeded with the output model, its events and checkpoint', async () => {
    const created = await createJob({
      suffix: 'hosted-run',
      method: { type: 'supervised', supervised: { hyperparameters: { n_epochs: 2 } } },
      provider_options: { learning_rate: 0.0002 },
      metadata: { team: 'search' },
    });
    expect(created).toMatchObject({ status: 'validating_files', model: BASE, training_file: hosted.trainingFileId, metadata: { team: 'search' } });

    const done = await waitForStatus(created.id, ['succeeded', 'failed']);
    const remote = hosted.fake.state.jobs.get(`gw-${created.id}`);
    expect(remote).toMatchObject({
      baseModel: `accounts/fireworks/models/${BASE}`,
      displayName: 'hosted-run',
      outputModel: `accounts/${ACCOUNT}/models/hosted-run-${created.id.slice(0, 8)}`,
      epochs: 2,
      learningRate: 0.0002,
      state: 'JOB_STATE_COMPLETED',
    });
    expect(done).toMatchObject({
      status: 'succeeded',
      fine_tuned_model: remote?.outputModel,
      training_file: hosted.trainingFileId,
      finished_at: expect.any(Number),
    });
    expect(done.hyperparameters).toMatchObject({ n_epochs: 2 });
    tunedModel = done.fine_tuned_model!;

    // The dataset arrived byte for byte, in a dataset of the account.
    const datasetId = remote!.dataset.split('/').pop()!;
    expect(hosted.fake.state.datasetFiles.get(datasetId)?.get('train.jsonl')?.content?.toString()).toBe(dataset());

    const messages = await messagesOf(created.id);
    expect(messages[0]).toBe('Job status changed from running to succeeded');
    expect(messages).toEqual(
      expect.arrayContaining([
        `Uploaded training file to fireworks-ai as ${datasetId}`,
        `Submitted to fireworks-ai as gw-${created.id}`,
        `Job completed: output model ${remote?.outputModel}`,
        expect.stringMatching(/^Training 100% done/),
      ]),
    );
    // Each synthesised event is stored once, however often the job was polled.
    expect(messages.filter((m) => m.startsWith('Fine-tuning job created:'))).toHaveLength(1);
    expect(messages.filter((m) => m.startsWith('Training 100% done'))).toHaveLength(1);

    const checkpoints = await hosted.client.fineTuning.jobs.checkpoints.list(created.id);
    expect(checkpoints.data).toEqual([
      expect.objectContaining({ fine_tuned_model_checkpoint: remote?.outputModel, step_number: 2, fine_tuning_job_id: created.id }),
    ]);
  });

  it('serves the tuned model through chat completions once deployed, naming the deployment to use', async () => {
    expect(tunedModel).toBeDefined();
    const model = tunedModel!;
    const served = `${model}#accounts/${ACCOUNT}/deployments/chat-serving`;
    // A model of an account answers only on a deployment: the gateway says which header names it, before calling Fireworks.
    await chatOnDeployment(hosted.gw, model, {
      header: 'x-gateway-fireworks-deployment',
      calls: () => hosted.fake.state.chatRequests,
      deploy: () => {
        hosted.fake.deploy(model, `accounts/${ACCOUNT}/deployments/chat-serving`);
        return { value: 'chat-serving', servedAs: served };
      },
    });
    expect(hosted.fake.state.chatRequests.at(-1)).toMatchObject({ model: served });

    // A hostile deployment name is refused before any call.
    const hostile = { 'x-gateway-fireworks-deployment': '../../evil' };
    expect(
      await api(hosted.gw, 'POST', '/v1/chat/completions', { headers: hostile, body: { model, messages: [{ role: 'user', content: 'x' }] } }),
    ).toMatchObject({ status: 400 });
  });

  describe('tools and structured outputs, as sent', () => {
    const sent = () => openAIWireSent(hosted.fake.state.chatRequests.at(-1)!);
    // The deployment the previous test made serves the tuned model.
    const onDeployment = () => gatewaySdk(hosted.gw, { headers: { 'x-gateway-fireworks-deployment': 'chat-serving' } });
    toolRequestCase('Fireworks fine-tuned model', () => ({ model: tunedModel!, client: onDeployment, sent }));
    toolRequestCase('Fireworks @slug/model', () => ({ model: `@my-fireworks/${BASE}`, client: () => hosted.client, sent }));
  });

  it('fails a job asking for a learning-rate multiplier, naming the field', async () => {
    const created = await createJob({ method: { type: 'supervised', supervised: { hyperparameters: { learning_rate_multiplier: 2 } } } });
    const done = await waitForStatus(created.id, ['failed', 'succeeded']);
    expect(done.status).toBe('failed');
    expect(done.error).toMatchObject({ code: 'unsupported_parameter', param: 'method.supervised.hyperparameters.learning_rate_multiplier' });
    expect(hosted.fake.state.jobs.has(`gw-${created.id}`)).toBe(false);
  });

  it('cancels: the job ends cancelled with an event saying the Fireworks job keeps running, and is no longer followed', async () => {
    // Every read of a hosted job fails from now on, so the job stays where the submission left it.
    hosted.fake.failNext('GET', `/v1/accounts/${ACCOUNT}/supervisedFineTuningJobs/gw-`, 503, { times: 1_000_000 });
    const created = await createJob();
    await eventually(async () => ((await messagesOf(created.id)).some((m) => m.startsWith('Submitted to')) ? true : undefined), 60_000);

    const cancelled = await hosted.client.fineTuning.jobs.cancel(created.id);
    expect(cancelled).toMatchObject({ id: created.id, status: 'cancelled', finished_at: expect.any(Number) });
    const events = (await hosted.client.fineTuning.jobs.listEvents(created.id, { limit: 100 })).data;
    expect(events).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          level: 'warn',
          message: 'Fireworks AI has no cancel operation: the job keeps running there, and the gateway no longer follows it',
          data: { provider_job_id: `gw-${created.id}` },
        }),
      ]),
    );
    // Nothing was deleted at Fireworks, and the monitor leaves the job alone from now on.
    expect(hosted.fake.state.jobs.has(`gw-${created.id}`)).toBe(true);
    expect(hosted.fake.state.requests.some((r) => r.method === 'DELETE')).toBe(false);
    const reads = () => hosted.fake.state.requests.filter((r) => r.path.endsWith(`/gw-${created.id}`)).length;
    // A poll already in flight when the cancel landed may still finish (its retries included): it holds the
    // job's lease until then. Once the lease is free, no poll follows.
    const prisma = hosted.gw.gateway.services.db.prisma;
    await eventually(
      async () => ((await prisma.fineTuningJob.findUniqueOrThrow({ where: { id: created.id } })).leaseOwner === null ? true : undefined),
      10_000,
    );
    const before = reads();
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(reads()).toBe(before);
    expect((await hosted.client.fineTuning.jobs.retrieve(created.id)).status).toBe('cancelled');
  });
});
