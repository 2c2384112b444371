/**
 * Hosted (provider-mode) fine-tuning jobs on a `bedrock` integration against the fake Bedrock, on the
 * hosted-job contract (jobs move only when a test says so: every status the monitor sees is one the
 * test chose). Bedrock's own: the dataset converted to Nova's format in the integration's bucket, the
 * job submitted with the gateway job id as clientRequestToken, the custom model ARN as
 * `fine_tuned_model` served once deployed; throttling retried without a second job; an interrupted
 * submission's job adopted through findJob.
 */
import { startFakeBedrock, type FakeCustomizationJob } from '../fakes/bedrock-server';
import { hostedJobContract } from '../support/hosted-kit';
import {
  bedrock,
  bedrockIntegration,
  chatDataset,
  DEFAULT_BUCKET,
  expectRecords,
  fakeEndpoints,
  NOVA,
  ROLE_ARN,
  storedLines,
  upload,
} from '../providers/bedrock-harness';
import { propertiesOf } from '../chat/sdk-suite';
import { eventually } from './harness';

const hosted = hostedJobContract('bedrock', {
  start: () => startFakeBedrock({ stepsPerPoll: 0 }),
  env: fakeEndpoints,
  integrations: (fake) => [
    {
      slug: 'hosted-bedrock',
      provider: 'bedrock',
      name: 'Bedrock',
      ...bedrockIntegration(fake, { 'x-gateway-aws-s3-bucket': DEFAULT_BUCKET, 'x-gateway-aws-role-arn': ROLE_ARN }),
    },
  ],
  // A hosted job on the integration, for the base model NOVA under a name of the caller's own.
  model: 'my-nova',
  job: { provider_options: { model: NOVA } },
  dataset: chatDataset(12),
  refusedOption: { warmup_ratio: 0.1 },
  remote: (fake, arn): FakeCustomizationJob | undefined => fake.state.jobs.get(arn),
  requests: (fake) => fake.control.requests,
  held: { advance: (fake, arn) => void fake.advance(arn), statuses: ['queued', 'running', 'succeeded'] },
  succeeded: {
    // Bedrock has no seed or metadata: a hosted job keeps them in the gateway.
    job: { seed: 42 },
    done: (remote) => ({ fine_tuned_model: remote.outputModelArn, result_files: [expect.stringMatching(/step_wise_training_metrics\.csv$/)] }),
    events: (remote) => [
      expect.stringMatching(/^Uploaded training file to bedrock as s3:\/\//),
      'Validation of the training data completed',
      'Training started',
      `The job has successfully completed: ${remote.outputModelArn}`,
    ],
    once: 'Training started',
    checkpoints: (remote) => [expect.objectContaining({ fine_tuned_model_checkpoint: remote.outputModelArn, step_number: expect.any(Number) })],
    check: (remote, done) => {
      expect(remote.request).toMatchObject({
        jobName: `gateway-${done.id}`,
        clientRequestToken: done.id,
        customModelName: 'hosted-run',
        baseModelIdentifier: NOVA,
        roleArn: ROLE_ARN,
        hyperParameters: { epochCount: '2' },
      });
      expect(Object.keys(remote.request)).not.toEqual(expect.arrayContaining([expect.stringMatching(/seed|metadata/)]));
      expect(done).toMatchObject({ seed: 42, metadata: { team: 'search' } });
      expect(done.fine_tuned_model).toMatch(/^arn:aws:bedrock:us-east-1:123456789012:custom-model\/amazon\.nova-micro-v1:0:128k\/[a-z0-9]{12}$/);
      // The gateway's dataset went to the integration's bucket in Nova's Converse format, every line there.
      expectRecords(storedLines(hosted.fake, remote.trainingDataConfig.s3Uri), NOVA);
    },
  },
  failures: [
    [
      'Bedrock refuses (a model it cannot customize)',
      { provider_options: { model: 'amazon.nova-canvas-v1:0', role_arn: ROLE_ARN } },
      { code: 'ValidationException', message: expect.stringMatching(/^Amazon Bedrock: The provided model identifier is invalid/), param: null },
    ],
    [
      'for a model whose format the gateway does not convert',
      { provider_options: { model: 'mistral.mistral-7b-instruct-v0:2' } },
      { code: 'unsupported_model' },
    ],
    [
      'asking for another customization than fine-tuning',
      {
        model: 'amazon.titan-text-lite-v1:0:4k',
        provider_options: { model: 'meta.llama3-1-8b-instruct-v1:0:128k', learning_rate: 0.0001, training_type: 'distillation' },
      },
      { code: 'invalid_request', message: expect.stringContaining('must be FINE_TUNING') },
    ],
  ],
  failed: {
    fail: (fake, arn) => fake.failJob(arn, 'Training failed: out of memory'),
    error: { code: 'model_customization_failed', message: expect.stringContaining('Training failed: out of memory') },
  },
  cancel: {
    // Stopping reads running until Bedrock has stopped the job; Bedrock's events of both are kept.
    answers: ['running'],
    asked: (remote) => expect(remote.status).toBe('Stopping'),
    stopped: (remote, events) => {
      expect(remote.status).toBe('Stopped');
      const stopped = ['The job was stopped', 'Validation of the training data stopped'];
      const messages = events.map((e) => e.message);
      expect(messages).toEqual(expect.arrayContaining(['Cancelled at Amazon Bedrock', 'Job status changed from validating_files to running', ...stopped]));
    },
  },
  // Signed with the integration's credentials (the fake checks the SigV4 signature), in the integration's region.
  deployment: {
    header: 'x-gateway-aws-bedrock-model',
    refusal: /custom model deployment or provisioned throughput.*x-gateway-aws-bedrock-model/,
    calls: (): unknown[] => hosted.fake.state.converseCalls,
    deploy: (model): { value: string } => ({ value: hosted.fake.registerDeployment(model) }),
    sent: (value) => ({ modelId: value, stream: false }),
  },
  // Tools and structured outputs, translated to Converse: a json_schema becomes a forced tool.
  tools: {
    sent: () => {
      const config = hosted.fake.state.converseCalls.at(-1)!.body.toolConfig as { tools: any[]; toolChoice?: { tool?: { name: string } } };
      const tools = config.tools.map((t) => [t.toolSpec.name, propertiesOf(t.toolSpec.inputSchema.json)]);
      return { tools: Object.fromEntries(tools), forced: config.toolChoice?.tool?.name, answerSchema: undefined };
    },
    schemaAsTool: true,
    atSlug: 'amazon.nova-lite-v1:0',
  },
});
const { createJob, waitForStatus } = hosted;

/** The Bedrock job the monitor submitted for a gateway job (found by its idempotency token). */
const submitted = (id: string) => eventually(async () => [...hosted.fake.state.jobs.values()].find((j) => j.clientRequestToken === id));

describe('hosted Bedrock jobs', () => {
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
      // The gateway job id is the idempotency token: a repeated create answers the same Bedrock job.
      const input = { model: NOVA, trainingFile: training, options: {}, gatewayJobId: created.id };
      const remote = await provider.createJob(input);
      expect((await provider.createJob(input)).id).toBe(remote.id);
      await hosted.gw.gateway.services.db.prisma.fineTuningJob.update({
        where: { id: created.id },
        data: { providerTrainingFileId: training, submitAttempts: 1 },
      });
      const requests = hosted.fake.state.createJobRequests.length;
      hosted.gw.gateway.monitor.start();
      await eventually(async () => ((await hosted.messagesOf(created.id)).includes(`Submitted to bedrock as ${remote.id}`) ? true : undefined));
      expect(hosted.fake.state.createJobRequests).toHaveLength(requests);
      hosted.fake.advance(remote.id, 3);
      expect((await waitForStatus(created.id, ['succeeded'])).fine_tuned_model).toBe(hosted.fake.state.jobs.get(remote.id)!.outputModelArn);
    } finally {
      hosted.gw.gateway.monitor.start();
    }
  });
});
