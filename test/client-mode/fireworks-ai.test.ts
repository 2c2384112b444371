/**
 * Client mode (x-gateway-provider: fireworks-ai) on the client-mode contract
 * (test/support/client-mode-kit.ts), against the fake Fireworks, the account in
 * `x-gateway-fireworks-account-id`; here what is Fireworks' own: datasets and job fields (what a create
 * sends and answers), content from signed URLs without the key, cancel answered `unsupported_operation`,
 * its page tokens, another account's 403, an undeployed model and a deployed one named by its `#…`.
 */
import OpenAI, { toFile } from 'openai';
import { startFakeFireworks } from '../fakes/fireworks-server';
import { dataset } from '../fine-tuning/harness';
import { clientModeContract, clientSdk } from '../support/client-mode-kit';
import { expectError } from '../support/expect';
import { api, gatewayOnFake } from '../support/gateway';

const KEY = 'fw-client-mode-0123456789abcdef';
const ACCOUNT = 'acme-labs';
const BASE = 'llama-v3p1-8b-instruct';
const HEADERS = { 'x-gateway-provider': 'fireworks-ai', 'x-gateway-fireworks-account-id': ACCOUNT };

const on = gatewayOnFake(
  () => startFakeFireworks({ apiKey: KEY, accountId: ACCOUNT, runningPolls: 2 }),
  (fake) => ({ GATEWAY_FIREWORKS_BASE_URL: fake.origin, GATEWAY_PROVIDER_TIMEOUT_MS: '1500' }),
);

const HEADERS_WITH_KEY = { ...HEADERS, authorization: `Bearer ${KEY}` };

describe('client mode with Fireworks AI', () => {
  clientModeContract({
    gw: () => on.gw,
    headers: () => HEADERS_WITH_KEY,
    seen: () => on.fake.state.requests.length,
    errors: { fake: () => on.fake, listPath: `/v1/accounts/${ACCOUNT}/supervisedFineTuningJobs`, unknownJob: 'missing-job', secret: KEY },
    dataset: () => dataset(12),
    model: BASE,
    file: (content) => ({ id: expect.stringMatching(/^train-[0-9a-f]{8}$/), bytes: content.length, status: 'processed' }),
    stored: (uploaded, content) => expect(on.fake.state.datasetFiles.get(uploaded.id)?.get('train.jsonl')?.content?.toString()).toBe(content),
    unpagedFileList: true,
    // The Fireworks account; Fireworks takes no seed: 0.
    job: () => ({
      model: `accounts/fireworks/models/${BASE}`,
      status: 'queued',
      organization_id: ACCOUNT,
      seed: 0,
      hyperparameters: { n_epochs: 2, batch_size: 16 },
    }),
    // An 'auto' multiplier is Fireworks' choice: nothing sent.
    create: {
      provider_options: { learning_rate: 0.0003 },
      method: { type: 'supervised', supervised: { hyperparameters: { n_epochs: 2, batch_size: 16, learning_rate_multiplier: 'auto' } } },
    },
    done: (job) => ({ fine_tuned_model: on.fake.state.jobs.get(job.id)?.outputModel }),
    events: (events, job, done) => {
      expect(done.fine_tuned_model).toMatch(new RegExp(`^accounts/${ACCOUNT}/models/cm-[0-9a-f]{8}$`));
      expect(events[0]).toMatchObject({ id: `${job.id}-state-job_state_completed`, message: `Job completed: output model ${done.fine_tuned_model}` });
    },
    checkpoints: (checkpoints, job, done) =>
      expect(checkpoints).toEqual([
        expect.objectContaining({ object: 'fine_tuning.job.checkpoint', fine_tuning_job_id: job.id, fine_tuned_model_checkpoint: done.fine_tuned_model }),
      ]),
    // Fireworks cannot cancel a job: the gateway says so rather than deleting it.
    cancel: async (sdk, _other, done) => {
      const cancel = await sdk.fineTuning.jobs.cancel(done.id).catch((err: unknown) => err);
      expect(cancel).toBeInstanceOf(OpenAI.BadRequestError);
      expect(cancel).toMatchObject({ status: 400, code: 'unsupported_operation', type: 'invalid_request_error' });
    },
    after: ({ uploaded, job }) => {
      expect(on.fake.state.jobs.get(job.id)).toMatchObject({
        baseModel: `accounts/fireworks/models/${BASE}`,
        epochs: 2,
        batchSizeSamples: 16,
        learningRate: 0.0003,
        displayName: 'cm',
        dataset: `accounts/${ACCOUNT}/datasets/${uploaded.id}`,
      });
      expect(on.fake.state.datasets.has(uploaded.id)).toBe(false);
    },
    afterDirect: () => {
      const control = on.fake.state.requests.filter((r) => r.path.startsWith('/v1/'));
      expect(control.every((r) => r.headers.authorization === `Bearer ${KEY}` && r.path.startsWith(`/v1/accounts/${ACCOUNT}/`))).toBe(true);
      // The content came from the signed URL, which carries no key.
      const bucket = on.fake.state.requests.filter((r) => r.path.startsWith('/fireworks-fake-dataset-uploads/'));
      expect(bucket.map((r) => [r.method, r.headers.authorization])).toEqual([['GET', undefined]]);
      expect(on.fake.state.requests.some((r) => r.method === 'DELETE' && r.path.includes('supervisedFineTuningJobs'))).toBe(false);
    },
    integration: () => ({ credentials: { api_key: KEY }, options: { 'x-gateway-fireworks-account-id': ACCOUNT } }),
    hostile: ['evil.com/x', 'a@b', 'a:1', 'a.b', 'a%2fb', 'x'.repeat(300)].map((id): [string, string] => ['x-gateway-fireworks-account-id', id]),
    required: ['x-gateway-fireworks-account-id', 'authorization'],
    wrongKey: {
      header: 'authorization',
      value: 'Bearer fw-wrong-9876543210',
      status: 401,
      error: { message: 'Fireworks AI: unauthenticated: invalid API key' },
    },
  });

  it("pages lists with Fireworks' page token as the cursor", async () => {
    const sdk = clientSdk(on.gw, HEADERS_WITH_KEY);
    for (let i = 0; i < 2; i++) await sdk.files.create({ file: await toFile(Buffer.from(dataset(10)), `p${i}.jsonl`), purpose: 'fine-tune' });
    const first = await api(on.gw, 'GET', '/v1/files?limit=1', { headers: HEADERS_WITH_KEY });
    expect(first.body).toMatchObject({ has_more: true, data: [{ filename: 'p1.jsonl' }] });
    const next = await api(on.gw, 'GET', `/v1/files?limit=1&after=${encodeURIComponent(first.body.last_id)}`, {
      headers: HEADERS_WITH_KEY,
    });
    expect(next.body.data).toMatchObject([{ filename: 'p0.jsonl' }]);
  });

  // The adapter contract's table refuses the multiplier, DPO and the rest; here the legacy field's name on the wire.
  it('refuses a legacy hyperparameters.learning_rate_multiplier with 400 naming it so, before any request', async () => {
    const before = on.fake.state.requests.length;
    const body = { model: BASE, training_file: 'x', hyperparameters: { learning_rate_multiplier: 2 } };
    const res = await api(on.gw, 'POST', '/v1/fine_tuning/jobs', { headers: HEADERS_WITH_KEY, body });
    expectError(res, 400, { param: 'hyperparameters.learning_rate_multiplier', code: 'unsupported_parameter' });
    expect(on.fake.state.requests).toHaveLength(before);
  });

  it('answers a call on another account with 403', async () => {
    const headers = { ...HEADERS_WITH_KEY, 'x-gateway-fireworks-account-id': 'someone-else' };
    const res = await api(on.gw, 'GET', '/v1/files', { headers });
    expect({ status: res.status, type: res.body.error.type }).toEqual({ status: 403, type: 'provider_error' });
  });

  it('passes a fine-tuned model without a deployment on to Fireworks, relaying its 404 with what to do; a deployed model named by its #… needs no setting', async () => {
    const model = `accounts/${ACCOUNT}/models/my-tuned-model`;
    const before = on.fake.state.chatRequests.length;
    const res = await api(on.gw, 'POST', '/v1/chat/completions', {
      headers: HEADERS_WITH_KEY,
      body: { model, messages: [{ role: 'user', content: 'Hi' }] },
    });
    expect(on.fake.state.chatRequests.slice(before)).toEqual([expect.objectContaining({ model })]);
    expect(res.status).toBe(404);
    expect(res.body.error).toMatchObject({ type: 'provider_error', code: 'NOT_FOUND', param: 'model' });
    expect(res.body.error.message).toMatch(/^Fireworks AI: Model not found, inaccessible, and\/or not deployed \(.*x-gateway-fireworks-deployment\)$/);

    const deployed = `${model}#accounts/${ACCOUNT}/deployments/my-deployment`;
    on.fake.deploy(model, `accounts/${ACCOUNT}/deployments/my-deployment`);
    const answer = await api(on.gw, 'POST', '/v1/chat/completions', {
      headers: HEADERS_WITH_KEY,
      body: { model: deployed, messages: [{ role: 'user', content: 'Hi' }] },
    });
    expect(answer.status).toBe(200);
    expect(on.fake.state.chatRequests.at(-1)).toMatchObject({ model: deployed });
  });
});
