/**
 * Hosted (provider-mode) fine-tuning jobs on a `bedrock` integration, end to end through the job
 * monitor against the fake Bedrock: the gateway's dataset converted into the base model's format in
 * the integration's bucket, the job submitted with the gateway job id as clientRequestToken, followed
 * through statusDetails to `succeeded` with the custom model ARN as `fine_tuned_model`, its events and
 * checkpoint recorded once; cancel stops it at Bedrock; throttling retried by the monitor without a
 * second job; an interrupted submission's job adopted through findJob.
 */
import { startFakeBedrock, type FakeCustomizationJob } from '../fakes/bedrock-server';
import { gatewaySdk } from '../support/answers';
import { api } from '../support/gateway';
import { chatOnDeployment, hostedOnFake } from '../support/hosted-kit';
import { awsHeaders, bedrock, chatDataset, DEFAULT_BUCKET, fakeEndpoints, NOVA, ROLE_ARN, storedLines, upload } from '../providers/bedrock-harness';
import { propertiesOf, toolRequestCase, type SentTools } from '../chat/sdk-suite';
import { eventually } from './harness';

/** The first test's custom model, which the chat test then talks to. */
let customModel: string | undefined;

const hosted = hostedOnFake({
  // Jobs move only when a test says so (fake.advance): every status the monitor sees is one the test chose.
  start: () => startFakeBedrock({ stepsPerPoll: 0 }),
  env: fakeEndpoints,
  integrations: (fake) => {
    const headers = awsHeaders(fake);
    const credentials = { aws_access_key_id: headers['x-gateway-aws-access-key-id'], aws_secret_access_key: headers['x-gateway-aws-secret-access-key'] };
    const options = { 'x-gateway-aws-region': fake.region, 'x-gateway-aws-s3-bucket': DEFAULT_BUCKET, 'x-gateway-aws-role-arn': ROLE_ARN };
    return [{ slug: 'hosted-bedrock', provider: 'bedrock', name: 'Bedrock', credentials, options }];
  },
  // A hosted job on the integration, for the base model NOVA under a name of the caller's own.
  model: 'my-nova',
  job: { provider_options: { model: NOVA } },
  dataset: chatDataset(12),
});
const { createJob, waitForStatus } = hosted;

/** The Bedrock job the monitor submitted for a gateway job (found by its idempotency token). */
const submitted = (id: string) => eventually(async () => [...hosted.fake.state.jobs.values()].find((j) => j.clientRequestToken === id));

/** The stored events' messages, oldest first. */
const messagesOf = async (id: string) => (await hosted.messagesOf(id)).reverse();

describe('hosted Bedrock jobs', () => {
  it('uploads the converted dataset, submits, and follows the job to succeeded with the custom model ARN', async () => {
    const created = await createJob({ suffix: 'hosted', method: { type: 'supervised', supervised: { hyperparameters: { n_epochs: 2 } } } });
    expect(created).toMatchObject({ status: 'validating_files', model: 'my-nova', training_file: hosted.trainingFileId });
    const remote: FakeCustomizationJob = await submitted(created.id);
    expect(remote.request).toMatchObject({
      jobName: `gateway-${created.id}`,
      clientRequestToken: created.id,
      customModelName: 'hosted',
      baseModelIdentifier: NOVA,
      roleArn: ROLE_ARN,
      hyperParameters: { epochCount: '2' },
    });
    // The gateway's dataset went to the integration's bucket in Nova's Converse format, every line there.
    const lines = storedLines(hosted.fake, remote.trainingDataConfig.s3Uri);
    expect(lines).toHaveLength(12);
    expect(lines.every((l) => (l as { schemaVersion?: string }).schemaVersion === 'bedrock-conversation-2024')).toBe(true);
    expect(lines.filter((l) => !Object.hasOwn(l as object, 'system'))).toHaveLength(1);

    for (const status of ['queued', 'running', 'succeeded']) {
      hosted.fake.advance(remote.jobArn);
      await waitForStatus(created.id, [status]);
    }
    const done = await hosted.client.fineTuning.jobs.retrieve(created.id);
    expect(done).toMatchObject({
      status: 'succeeded',
      fine_tuned_model: remote.outputModelArn,
      finished_at: expect.any(Number),
      training_file: hosted.trainingFileId,
    });
    expect(done.fine_tuned_model).toMatch(/^arn:aws:bedrock:us-east-1:123456789012:custom-model\/amazon\.nova-micro-v1:0:128k\/[a-z0-9]{12}$/);
    expect(done.result_files).toEqual([expect.stringMatching(/step_wise_training_metrics\.csv$/)]);

    const messages = await messagesOf(created.id);
    const statusPath = messages.filter((m) => m.startsWith('Job status changed'));
    expect(statusPath).toEqual([
      'Job status changed from validating_files to queued',
      'Job status changed from queued to running',
      'Job status changed from running to succeeded',
    ]);
    expect(messages).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^Uploaded training file to bedrock as s3:\/\//),
        `Submitted to bedrock as ${remote.jobArn}`,
        'Validation of the training data completed',
        'Training started',
        `The job has successfully completed: ${remote.outputModelArn}`,
      ]),
    );
    // Each synthesised event stored once, however often the job was polled.
    expect(messages.filter((m) => m === 'Training started')).toHaveLength(1);
    const checkpoints = await hosted.client.fineTuning.jobs.checkpoints.list(created.id);
    expect(checkpoints.data).toEqual([expect.objectContaining({ fine_tuned_model_checkpoint: remote.outputModelArn, step_number: expect.any(Number) })]);
    customModel = remote.outputModelArn;
  });

  it('serves the custom model through chat completions once deployed, with the integration’s credentials', async () => {
    expect(customModel).toBeDefined();
    const deployment = await chatOnDeployment(hosted.gw, customModel!, {
      header: 'x-gateway-aws-bedrock-model',
      calls: () => hosted.fake.state.converseCalls,
      deploy: (model) => ({ value: hosted.fake.registerDeployment(model) }),
    });
    // Signed with the integration's credentials (the fake checks the SigV4 signature), in the integration's region.
    expect(hosted.fake.state.converseCalls.at(-1)).toMatchObject({ modelId: deployment, stream: false });
  });

  describe('tools and structured outputs, translated to Converse', () => {
    let deployment: string | undefined;
    const sent = (): SentTools => {
      const config = hosted.fake.state.converseCalls.at(-1)!.body.toolConfig as { tools: any[]; toolChoice?: { tool?: { name: string } } };
      const tools = config.tools.map((t) => [t.toolSpec.name, propertiesOf(t.toolSpec.inputSchema.json)]);
      return { tools: Object.fromEntries(tools), forced: config.toolChoice?.tool?.name, answerSchema: undefined };
    };
    const onDeployment = () => {
      deployment ??= hosted.fake.registerDeployment(customModel!);
      return gatewaySdk(hosted.gw, { headers: { 'x-gateway-aws-bedrock-model': deployment } });
    };
    toolRequestCase('Bedrock fine-tuned model', () => ({ model: customModel!, client: onDeployment, sent, schemaAsTool: true }));
    toolRequestCase('Bedrock @slug/model', () => ({ model: '@hosted-bedrock/amazon.nova-lite-v1:0', client: () => hosted.client, sent, schemaAsTool: true }));
  });

  it('cancels at Bedrock: running while Bedrock stops it, then cancelled', async () => {
    const created = await createJob();
    const remote = await submitted(created.id);
    await eventually(async () => ((await messagesOf(created.id)).some((m) => m.startsWith('Submitted to bedrock')) ? true : undefined));
    const answer = await hosted.client.fineTuning.jobs.cancel(created.id);
    expect(answer.status).toBe('running');
    expect(remote.status).toBe('Stopping');
    hosted.fake.advance(remote.jobArn);
    const done = await waitForStatus(created.id, ['cancelled']);
    expect(done.finished_at).toEqual(expect.any(Number));
    expect(remote.status).toBe('Stopped');
    expect(await messagesOf(created.id)).toEqual(
      expect.arrayContaining(['Cancelled at Amazon Bedrock', 'Job status changed from validating_files to running', 'The job was stopped']),
    );
  });

  it('retries a throttled submission later, and still creates one Bedrock job', async () => {
    // Three answers 429: the SDK's own two retries, then the monitor's retry after a back-off.
    hosted.fake.control.failNext('POST', '/model-customization-jobs', 429, { times: 3 });
    const created = await createJob();
    const remote = await submitted(created.id);
    expect([...hosted.fake.state.jobs.values()].filter((j) => j.clientRequestToken === created.id)).toHaveLength(1);
    hosted.fake.advance(remote.jobArn, 3);
    await waitForStatus(created.id, ['succeeded']);
  });

  it('adopts the Bedrock job of an interrupted submission instead of creating a second one', async () => {
    await hosted.gw.gateway.monitor.stop();
    try {
      const created = await createJob();
      // What a process that crashed right after Bedrock's answer leaves: the uploaded data, the job, an attempt counted.
      const provider = bedrock(hosted.fake);
      const training = (await upload(provider, chatDataset(12), NOVA)).id;
      const remote = await provider.createJob({ model: NOVA, trainingFile: training, options: {}, gatewayJobId: created.id });
      await hosted.gw.gateway.services.db.prisma.fineTuningJob.update({
        where: { id: created.id },
        data: { providerTrainingFileId: training, submitAttempts: 1 },
      });
      const requests = hosted.fake.state.createJobRequests.length;
      hosted.gw.gateway.monitor.start();
      await eventually(async () => ((await messagesOf(created.id)).includes(`Submitted to bedrock as ${remote.id}`) ? true : undefined));
      expect(hosted.fake.state.createJobRequests).toHaveLength(requests);
      hosted.fake.advance(remote.id, 3);
      expect((await waitForStatus(created.id, ['succeeded'])).fine_tuned_model).toBe(hosted.fake.state.jobs.get(remote.id)!.outputModelArn);
    } finally {
      hosted.gw.gateway.monitor.start();
    }
  });

  it('refuses a credential in gateway_options; fails a job Bedrock or the adapter refuses, with the reason', async () => {
    const withSecret = await api(hosted.gw, 'POST', '/v1/fine_tuning/jobs', {
      body: {
        model: NOVA,
        training_file: hosted.trainingFileId,
        gateway_options: { 'x-gateway-provider': '@hosted-bedrock', 'x-gateway-aws-secret-access-key': 'x' },
      },
    });
    expect(withSecret.status).toBe(400);
    expect(withSecret.body.error.param).toBe('gateway_options.x-gateway-aws-secret-access-key');

    const notCustomizable = await createJob({ provider_options: { model: 'amazon.nova-canvas-v1:0', role_arn: ROLE_ARN } });
    const failed = await waitForStatus(notCustomizable.id, ['failed']);
    expect(failed.error).toEqual({
      code: 'ValidationException',
      message: expect.stringMatching(/^Amazon Bedrock: The provided model identifier is invalid/),
      param: null,
    });
    const unknownFormat = await createJob({ provider_options: { model: 'mistral.mistral-7b-instruct-v0:2' } });
    expect((await waitForStatus(unknownFormat.id, ['failed'])).error).toMatchObject({ code: 'unsupported_model' });
    const refused = await createJob({
      model: 'amazon.titan-text-lite-v1:0:4k',
      provider_options: { model: 'meta.llama3-1-8b-instruct-v1:0:128k', learning_rate: 0.0001, training_type: 'distillation' },
    });
    const done = await waitForStatus(refused.id, ['failed']);
    expect(done.error).toMatchObject({ code: 'invalid_request', message: expect.stringContaining('must be FINE_TUNING') });
  });
});
