/**
 * Hosted (provider-mode) fine-tuning jobs on a `vertex-ai` integration, end to end through the job
 * monitor against the fake Google Cloud: the dataset streamed to Cloud Storage in Gemini's format,
 * the tuning job created with the gateway job id as a label, followed to `succeeded` with the tuned
 * model as `fine_tuned_model` (its endpoint kept for chat) and the job's checkpoints; cancel ending
 * `cancelled`; Vertex's 429 retried and its failure recorded; settings checked at creation.
 */
import { startFakeVertex, type TuningJob } from '../fakes/vertex-server';
import { api } from '../support/gateway';
import { eventually } from '../support/expect';
import { hostedOnFake } from '../support/hosted-kit';
import { BUCKET, fakeEndpoints } from '../providers/vertex-ai.support';
import { propertiesOf, toolRequestCase, type SentTools } from '../chat/sdk-suite';
import { dataset } from './harness';

/** The first test's tuned model, which the tools test then talks to. */
let tunedModel: string | undefined;

const hosted = hostedOnFake({
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
  model: 'gemini-2.0-flash-001',
  dataset: dataset(12),
});
const { createJob, waitForStatus } = hosted;

/** The fake's tuning job the monitor submitted for gateway job `id` (found by its label). */
const providerJobOf = (id: string) =>
  eventually(() => Promise.resolve([...hosted.fake.state.tuningJobs.values()].find((job: TuningJob) => job.labels?.gateway_job_id === id)));

async function servingModelOf(id: string): Promise<string | null> {
  const rows = await hosted.gw.gateway.services.db.prisma.$queryRawUnsafe<{ serving_model: string | null }[]>(
    'SELECT serving_model FROM fine_tuning_jobs WHERE id = $1',
    id,
  );
  return rows[0]?.serving_model ?? null;
}

describe('hosted fine-tuning jobs on Vertex AI', () => {
  it('uploads the dataset in Gemini format, submits, and follows the job to succeeded with the tuned model and its checkpoints', async () => {
    const created = await createJob({ suffix: 'faq-bot', method: { type: 'supervised', supervised: { hyperparameters: { n_epochs: 2 } } } });
    expect(created).toMatchObject({ status: 'validating_files', model: 'gemini-2.0-flash-001', training_file: hosted.trainingFileId });

    const done = await waitForStatus(created.id, ['succeeded', 'failed', 'cancelled']);
    const remote = await providerJobOf(created.id);
    expect(done).toMatchObject({
      status: 'succeeded',
      fine_tuned_model: remote.tunedModel!.model,
      trained_tokens: expect.any(Number),
      finished_at: expect.any(Number),
      training_file: hosted.trainingFileId,
      hyperparameters: { n_epochs: 2, batch_size: 'auto', learning_rate_multiplier: 'auto' },
    });
    expect(await servingModelOf(created.id)).toBe(remote.tunedModel!.endpoint);
    tunedModel = done.fine_tuned_model!;

    // The job asked Vertex for what the caller asked, on the dataset the monitor converted and uploaded.
    expect(remote).toMatchObject({
      baseModel: 'gemini-2.0-flash-001',
      tunedModelDisplayName: 'faq-bot',
      supervisedTuningSpec: { hyperParameters: { epochCount: '2' } },
    });
    const uri = String(remote.supervisedTuningSpec.trainingDatasetUri);
    const stored = hosted.fake.state.storage.buckets.get(BUCKET)!.get(uri.slice(`gs://${BUCKET}/`.length))!;
    const lines = stored.data
      .toString('utf8')
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines).toHaveLength(12);
    expect(lines[0]).toEqual({
      systemInstruction: { parts: [{ text: 'You are terse.' }] },
      contents: [
        { role: 'user', parts: [{ text: 'Question 1' }] },
        { role: 'model', parts: [{ text: 'Answer 1' }] },
      ],
    });

    const checkpoints = await hosted.client.fineTuning.jobs.checkpoints.list(created.id);
    expect(checkpoints.data.map((c) => [c.step_number, c.fine_tuned_model_checkpoint])).toEqual(
      [...remote.tunedModel!.checkpoints].reverse().map((c) => [Number(c.step), c.endpoint]),
    );
    const events = (await hosted.client.fineTuning.jobs.listEvents(created.id, { limit: 50 })).data.map((e) => e.message);
    expect(events).toEqual(
      expect.arrayContaining([`Uploaded training file to vertex-ai as ${uri}`, 'Tuning started', expect.stringMatching(/^Tuning succeeded: tuned model /)]),
    );
    // Each synthesised event was stored once, however often the monitor polled.
    expect(events.filter((m) => m === 'Tuning started')).toHaveLength(1);
  });

  describe('tools and structured outputs, translated to generateContent', () => {
    const sent = (): SentTools => {
      const body = hosted.fake.state.generateRequests.at(-1)!.body as Record<string, any>;
      const declarations: any[] = body.tools?.[0]?.functionDeclarations ?? [];
      const calling = body.toolConfig?.functionCallingConfig;
      return {
        tools: Object.fromEntries(declarations.map((d) => [d.name, propertiesOf(d.parameters)])),
        forced: calling?.mode === 'ANY' ? calling.allowedFunctionNames?.[0] : undefined,
        answerSchema: body.generationConfig?.responseSchema ? propertiesOf(body.generationConfig.responseSchema) : undefined,
      };
    };
    toolRequestCase('Vertex AI fine-tuned model', () => ({ model: tunedModel!, client: () => hosted.client, sent }));
    toolRequestCase('Vertex AI @slug/model', () => ({ model: '@my-vertex/gemini-2.5-flash', client: () => hosted.client, sent }));
  });

  it('cancels a submitted job at Vertex; it ends cancelled', async () => {
    hosted.fake.settings.stepsPerPoll = 0; // the job stays pending until cancelled
    try {
      const created = await createJob();
      const remote = await providerJobOf(created.id);
      await eventually(async () => ((await hosted.client.fineTuning.jobs.retrieve(created.id)).status === 'queued' ? true : undefined));
      const cancelled = await hosted.client.fineTuning.jobs.cancel(created.id);
      expect(['running', 'cancelled']).toContain(cancelled.status);
      expect(hosted.fake.state.requests.some((r) => r.method === 'POST' && r.path.endsWith(`${remote.name}:cancel`))).toBe(true);
      hosted.fake.advance(remote.name);
      expect(await waitForStatus(created.id, ['cancelled', 'succeeded', 'failed'])).toMatchObject({ status: 'cancelled', error: null });
    } finally {
      hosted.fake.settings.stepsPerPoll = 1;
    }
  });

  it("retries Vertex's 429 RESOURCE_EXHAUSTED and records a job Vertex failed, with its reason", async () => {
    hosted.fake.failNext('GET', `/v1/projects/${hosted.fake.projectNumber}/locations/${hosted.fake.location}/tuningJobs/`, 429, { times: 5 });
    const created = await createJob();
    const remote = await providerJobOf(created.id);
    hosted.fake.failJob(remote.name, { code: 8, message: 'Quota exceeded for tuning.' });
    const failed = await waitForStatus(created.id, ['failed', 'succeeded', 'cancelled']);
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'resource_exhausted', message: 'Quota exceeded for tuning.' } });
    // Five reads were refused (retried by the HTTP client, then by the monitor's back-off) before one got through.
    expect(hosted.fake.state.requests.filter((r) => r.method === 'GET' && r.path === `/v1/${remote.name}`).length).toBeGreaterThanOrEqual(6);
  });

  it('checks the settings at creation: a missing bucket, or one gateway_options would choose, is a 400 naming it', async () => {
    const missing = await api(hosted.gw, 'POST', '/v1/fine_tuning/jobs', {
      body: { model: 'gemini-2.0-flash-001', training_file: hosted.trainingFileId, gateway_options: { 'x-gateway-provider': '@no-bucket' } },
    });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatchObject({ code: 'missing_setting', message: expect.stringContaining('x-gateway-vertex-storage-bucket-name') });

    // The bucket chooses where the integration's credentials are used: it comes from the integration only.
    const withBucket = await api(hosted.gw, 'POST', '/v1/fine_tuning/jobs', {
      body: {
        model: 'gemini-2.0-flash-001',
        training_file: hosted.trainingFileId,
        gateway_options: { 'x-gateway-provider': '@no-bucket', 'x-gateway-vertex-storage-bucket-name': BUCKET },
      },
    });
    expect(withBucket.status).toBe(400);
    expect(withBucket.body.error).toMatchObject({ code: 'setting_not_overridable', param: 'gateway_options.x-gateway-vertex-storage-bucket-name' });

    const hostile = await api(hosted.gw, 'POST', '/v1/fine_tuning/jobs', {
      body: {
        model: 'gemini-2.0-flash-001',
        training_file: hosted.trainingFileId,
        gateway_options: { 'x-gateway-provider': '@my-vertex', 'x-gateway-vertex-region': 'us-central1.evil.com' },
      },
    });
    expect(hostile.status).toBe(400);
    expect(hostile.body.error.param).toBe('gateway_options.x-gateway-vertex-region');
  });
});
