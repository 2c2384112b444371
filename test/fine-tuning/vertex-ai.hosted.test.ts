/**
 * Hosted (provider-mode) fine-tuning jobs on a `vertex-ai` integration against the fake Google Cloud,
 * on the hosted-job contract. Vertex's own: the dataset streamed to Cloud Storage in Gemini's format,
 * the tuning job labelled with the gateway job id, the tuned model as `fine_tuned_model` (its
 * endpoint kept for chat) and its checkpoints; Vertex's 429 retried and its failure recorded; the
 * bucket and region checked at creation.
 */
import { startFakeVertex, type TuningJob } from '../fakes/vertex-server';
import { hostedJobContract } from '../support/hosted-kit';
import { BUCKET, fakeEndpoints, geminiDataset } from '../providers/vertex-ai.support';
import { propertiesOf } from '../chat/sdk-suite';
import { dataset } from './harness';
import { eventually } from '../support/expect';

const MODEL = 'gemini-2.0-flash-001';
const hosted = hostedJobContract('vertex-ai', {
  start: () => startFakeVertex(),
  env: fakeEndpoints,
  integrations: (fake) => {
    const options = { 'x-gateway-vertex-project-id': fake.projectId, 'x-gateway-vertex-region': fake.location };
    const credentials = { service_account_json: JSON.stringify(fake.serviceAccount) };
    return [
      { slug: 'my-vertex', provider: 'vertex-ai', credentials, options: { ...options, 'x-gateway-vertex-storage-bucket-name': BUCKET } },
      { slug: 'no-bucket', provider: 'vertex-ai', credentials, options },
    ];
  },
  model: MODEL,
  dataset: dataset(12),
  // A line of the key file's private key (the PEM's first line is the same in every key).
  secret: (fake) => fake.serviceAccount.private_key.split('\n')[1],
  remote: (fake, name): TuningJob | undefined => fake.state.tuningJobs.get(name.split('/').pop()!),
  succeeded: {
    done: (remote) => ({
      fine_tuned_model: remote.tunedModel!.model,
      trained_tokens: expect.any(Number),
      hyperparameters: { n_epochs: 2, batch_size: 'auto', learning_rate_multiplier: 'auto' },
    }),
    events: () => ['Tuning started', expect.stringMatching(/^Tuning succeeded: tuned model /)],
    once: 'Tuning started',
    checkpoints: (remote) =>
      [...remote.tunedModel!.checkpoints]
        .reverse()
        .map((c) => expect.objectContaining({ step_number: Number(c.step), fine_tuned_model_checkpoint: c.endpoint })),
    check: async (remote, done) => {
      const row = await hosted.gw.gateway.services.db.prisma.fineTuningJob.findUniqueOrThrow({ where: { id: done.id } });
      expect(row.servingModel).toBe(remote.tunedModel!.endpoint);
      // The job asked Vertex for what the caller asked, labelled with the gateway job id, on the dataset the monitor converted and uploaded.
      expect(remote).toMatchObject({
        baseModel: MODEL,
        tunedModelDisplayName: 'hosted-run',
        labels: { gateway_job_id: done.id },
        supervisedTuningSpec: { hyperParameters: { epochCount: '2' } },
      });
      const uri = String(remote.supervisedTuningSpec.trainingDatasetUri);
      expect(await hosted.messagesOf(done.id)).toContain(`Uploaded training file to vertex-ai as ${uri}`);
      const stored = hosted.fake.state.storage.buckets.get(BUCKET)!.get(uri.slice(`gs://${BUCKET}/`.length))!;
      expect(stored.data.toString()).toBe(geminiDataset(12));
    },
  },
  refused: [
    [
      'an integration without a bucket',
      { gateway_options: { 'x-gateway-provider': '@no-bucket' } },
      { param: undefined, code: 'missing_setting', message: /x-gateway-vertex-storage-bucket-name/ },
    ],
    // The bucket chooses where the integration's credentials are used: it comes from the integration only.
    [
      'a bucket in gateway_options',
      { gateway_options: { 'x-gateway-provider': '@no-bucket', 'x-gateway-vertex-storage-bucket-name': BUCKET } },
      { code: 'setting_not_overridable' },
    ],
    ['a hostile region', { gateway_options: { 'x-gateway-vertex-region': 'us-central1.evil.com' } }, {}],
  ],
  failures: [
    [
      'asking a Gemini model for a learning rate',
      { provider_options: { learning_rate: 0.001 } },
      { code: 'invalid_request', param: 'provider_options.learning_rate' },
    ],
  ],
  cancel: {
    // The job stays pending until cancelled.
    hold: (fake) => {
      fake.settings.stepsPerPoll = 0;
      return () => void (fake.settings.stepsPerPoll = 1);
    },
    when: 'queued',
    asked: (remote, fake) => {
      expect(fake.state.requests.some((r) => r.method === 'POST' && r.path.endsWith(`${remote.name}:cancel`))).toBe(true);
      fake.advance(remote.name);
    },
  },
  // Tools and structured outputs, translated to generateContent.
  tools: {
    sent: () => {
      const body = hosted.fake.state.generateRequests.at(-1)!.body as Record<string, any>;
      const declarations: any[] = body.tools?.[0]?.functionDeclarations ?? [];
      const calling = body.toolConfig?.functionCallingConfig;
      return {
        tools: Object.fromEntries(declarations.map((d) => [d.name, propertiesOf(d.parameters)])),
        forced: calling?.mode === 'ANY' ? calling.allowedFunctionNames?.[0] : undefined,
        answerSchema: body.generationConfig?.responseSchema ? propertiesOf(body.generationConfig.responseSchema) : undefined,
      };
    },
    atSlug: 'gemini-2.5-flash',
  },
});

describe('hosted fine-tuning jobs on Vertex AI', () => {
  it("retries Vertex's 429 RESOURCE_EXHAUSTED and records a job Vertex failed, with its reason", async () => {
    hosted.fake.failNext('GET', `/v1/projects/${hosted.fake.projectNumber}/locations/${hosted.fake.location}/tuningJobs/`, 429, { times: 5 });
    const created = await hosted.createJob();
    // The fake's tuning job for the gateway job, found by its label.
    const remote = await eventually(() => [...hosted.fake.state.tuningJobs.values()].find((job) => job.labels?.gateway_job_id === created.id));
    hosted.fake.failJob(remote.name, { code: 8, message: 'Quota exceeded for tuning.' });
    const failed = await hosted.waitForStatus(created.id, ['failed', 'succeeded', 'cancelled']);
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'resource_exhausted', message: 'Quota exceeded for tuning.' } });
    // Five reads were refused (retried by the HTTP client, then by the monitor's back-off) before one got through.
    expect(hosted.fake.state.requests.filter((r) => r.method === 'GET' && r.path === `/v1/${remote.name}`).length).toBeGreaterThanOrEqual(6);
  });
});
