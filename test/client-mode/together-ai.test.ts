/**
 * Client mode (x-gateway-provider: together-ai) on the client-mode contract
 * (test/support/client-mode-kit.ts), against the fake Together; here what is Together's own: its
 * PENDING files read `uploaded`, the fields it is sent, its asynchronous cancel, its job paging,
 * what it cannot take refused naming the field, its errors mapped.
 */
import { startFakeTogether } from '../fakes/together-server';
import { dataset } from '../fine-tuning/harness';
import { clientModeContract, clientSdk } from '../support/client-mode-kit';
import { api, gatewayOnFake } from '../support/gateway';

const KEY = 'tg-client-mode-0123456789abcdef';
const BASE = 'meta-llama/Meta-Llama-3.1-8B-Instruct-Reference';
const HEADERS = { 'x-gateway-provider': 'together-ai', authorization: `Bearer ${KEY}` };

const on = gatewayOnFake(
  () => startFakeTogether({ apiKey: KEY, userId: 'acme' }),
  (fake) => ({ GATEWAY_TOGETHER_BASE_URL: fake.url, GATEWAY_PROVIDER_TIMEOUT_MS: '1500' }),
);

describe('client mode with Together AI', () => {
  clientModeContract({
    gw: () => on.gw,
    headers: () => HEADERS,
    seen: () => on.fake.state.requests.length,
    errors: { fake: () => on.fake, listPath: '/v1/fine-tunes', unknownJob: 'ft-missing', secret: KEY },
    dataset: () => dataset(12),
    model: BASE,
    // Together's PENDING (then RUNNING) validation is OpenAI's `uploaded`.
    file: (content) => ({ id: expect.stringMatching(/^file-/), bytes: content.length, status: 'uploaded' }),
    // Together names no owner: the caller's gateway organisation. No seed was sent: 0.
    job: async () => ({
      id: expect.stringMatching(/^ft-/),
      model: BASE,
      status: 'queued',
      organization_id: (await api(on.gw, 'GET', '/v1/admin/workspaces')).body.data[0].organisation_id,
      seed: 0,
      method: { type: 'supervised', supervised: { hyperparameters: expect.objectContaining({ n_epochs: 2, batch_size: 4 }) } },
    }),
    // An 'auto' multiplier is Together's choice: nothing sent.
    create: {
      method: { type: 'supervised', supervised: { hyperparameters: { n_epochs: 2, batch_size: 4, learning_rate_multiplier: 'auto' } } },
      provider_options: { learning_rate: 0.0003 },
    },
    other: { seed: 42 },
    done: (job) => ({
      fine_tuned_model: on.fake.state.jobs.get(job.id)?.model_output_name,
      hyperparameters: expect.objectContaining({ n_epochs: 2, batch_size: 4 }),
    }),
    events: (events) => {
      expect(events[0]).toMatchObject({ id: expect.stringMatching(/^ftevent-/), message: expect.stringMatching(/^Job finished/) });
      expect(events.some((e) => e.type === 'metrics')).toBe(true);
    },
    checkpoints: (checkpoints, job) => expect(checkpoints[0]).toMatchObject({ fine_tuned_model_checkpoint: `${job.id}:6`, step_number: 6 }),
    cancel: async (sdk, other) => {
      expect(on.fake.state.fineTuneRequests.at(-1)).toMatchObject({ random_seed: 42 });
      // Together stops a job asynchronously: `cancel_requested` reads running until it is cancelled.
      expect(await sdk.fineTuning.jobs.cancel(other.id)).toMatchObject({ id: other.id, status: 'running', seed: 42 });
      expect(await sdk.fineTuning.jobs.retrieve(other.id)).toMatchObject({ status: 'cancelled' });
    },
    stored: (uploaded, content) => expect(on.fake.state.fileContents.get(uploaded.id)?.toString()).toBe(content),
    after: ({ uploaded }) => {
      const sent = on.fake.state.fineTuneRequests.filter((r) => r.suffix === 'cm').at(-1);
      expect(sent).toEqual({ model: BASE, training_file: uploaded.id, suffix: 'cm', n_epochs: 2, batch_size: 4, learning_rate: 0.0003 });
    },
    afterDirect: () =>
      expect(on.fake.state.requests.filter((r) => r.path.startsWith('/v1/')).every((r) => r.headers.authorization === `Bearer ${KEY}`)).toBe(true),
    integration: () => ({ credentials: { api_key: KEY } }),
    hostile: [],
    required: ['authorization'],
    wrongKey: { header: 'authorization', value: 'Bearer tg-wrong-9876543210', status: 401, error: { code: 'invalid_api_key' } },
  });

  it('pages the job list with the last id as cursor', async () => {
    const sdk = clientSdk(on.gw, HEADERS);
    const page = await sdk.fineTuning.jobs.list({ limit: 1 });
    expect(page.data).toHaveLength(1);
    expect(page.has_more).toBe(true);
    const next = await sdk.fineTuning.jobs.list({ limit: 1, after: page.data[0].id });
    expect(next.data[0].id).not.toBe(page.data[0].id);
  });

  it('refuses learning_rate_multiplier with 400 naming the field and provider_options.learning_rate, before any request', async () => {
    const before = on.fake.state.requests.length;
    const multiplier = await api(on.gw, 'POST', '/v1/fine_tuning/jobs', {
      headers: HEADERS,
      body: { model: BASE, training_file: 'file-x', method: { type: 'supervised', supervised: { hyperparameters: { learning_rate_multiplier: 2 } } } },
    });
    expect(multiplier.status).toBe(400);
    expect(multiplier.body.error).toMatchObject({ param: 'method.supervised.hyperparameters.learning_rate_multiplier', code: 'unsupported_parameter' });
    expect(multiplier.body.error.message).toContain('provider_options.learning_rate'); // the way out (the adapter contract refuses it too)
    expect(on.fake.state.requests).toHaveLength(before);
  });
});
