/**
 * Client mode with Vertex AI on the client-mode contract (test/support/client-mode-kit.ts), against
 * the fake Google Cloud: a service-account key in a header, in a stored integration (`@slug`), or the
 * caller's own access token; here what is Vertex's own: Gemini lines in gs://, resource names as ids,
 * one verified token exchange per sequence, malformed key files refused, its errors relayed.
 */
import { toFile } from 'openai';
import { CLOUD_PLATFORM_SCOPE, createServiceAccount, type ServiceAccountKey } from '../fakes/google-auth';
import { startFakeVertex } from '../fakes/vertex-server';
import { dataset, example } from '../fine-tuning/harness';
import { clientModeContract, clientSdk } from '../support/client-mode-kit';
import { api, gatewayOnFake } from '../support/gateway';
import { BUCKET, fakeEndpoints, geminiDataset, vertexHeaders } from '../providers/vertex-ai.support';

const on = gatewayOnFake(
  () => startFakeVertex(),
  (fake) => ({ ...fakeEndpoints(fake), GATEWAY_PROVIDER_TIMEOUT_MS: '1500' }),
);

/** A service account the fake's token endpoint knows, other than the one the other tests use (its own token cache entry). */
function newServiceAccount(name: string): ServiceAccountKey {
  const account = createServiceAccount(on.fake.projectId, on.fake.tokenUrl, name);
  on.fake.state.oauth.register(account);
  return account;
}

const exchangesOf = (account: ServiceAccountKey) => on.fake.state.oauth.requests.filter((r) => r.claims?.iss === account.client_email);

/** The fake's tuned model of a client-mode job. */
const tuned = (job: { id: string }) => on.fake.state.tuningJobs.get(job.id.split('/').at(-1)!)!.tunedModel!;
const storedObject = (id: string) => on.fake.state.storage.buckets.get(BUCKET)!.get(id.slice(`gs://${BUCKET}/`.length))!;

describe('client mode with Vertex AI', () => {
  let headerKey: ServiceAccountKey;
  let integrationKey: ServiceAccountKey;
  beforeAll(() => {
    headerKey = newServiceAccount('header-key');
    integrationKey = newServiceAccount('integration-key');
  });

  clientModeContract({
    gw: () => on.gw,
    headers: () => ({ 'x-gateway-provider': 'vertex-ai', ...vertexHeaders(on.fake), 'x-gateway-vertex-service-account-json': JSON.stringify(headerKey) }),
    seen: () => on.fake.state.requests.length,
    errors: {
      fake: () => on.fake,
      get listPath() {
        return `/v1/projects/${on.fake.projectId}/locations/${on.fake.location}/tuningJobs`;
      },
      get unknownJob() {
        return `projects/${on.fake.projectId}/locations/${on.fake.location}/tuningJobs/42`;
      },
      codes: { notFound: 'NOT_FOUND' },
      get secret() {
        return headerKey.private_key;
      },
    },
    dataset: () => dataset(12),
    model: 'gemini-2.0-flash-001',
    file: () => ({ id: expect.stringMatching(`^gs://${BUCKET}/gateway-files/`), status: 'processed' }),
    // Converted to Gemini lines as the upload streams in: one multipart upload, chunked.
    stored: (uploaded) => {
      expect(storedObject(uploaded.id).data.toString('utf8')).toBe(geminiDataset(12));
      const upload = on.fake.state.requests.filter((r) => r.path === `/upload/storage/v1/b/${BUCKET}/o`).at(-1)!;
      expect([upload.query.get('uploadType'), upload.headers['transfer-encoding']]).toEqual(['multipart', 'chunked']);
    },
    unpagedFileList: true,
    retrieved: (uploaded) => ({ bytes: storedObject(uploaded.id).data.length }),
    content: (uploaded) => storedObject(uploaded.id).data.toString('utf8'),
    create: {
      metadata: { team: 'search' },
      method: { type: 'supervised', supervised: { hyperparameters: { n_epochs: 2, learning_rate_multiplier: 0.5, batch_size: 'auto' } } },
    },
    // The Google Cloud project the job runs in; Vertex AI takes no seed: 0.
    job: () => ({
      id: expect.stringMatching(new RegExp(`^projects/${on.fake.projectNumber}/locations/us-central1/tuningJobs/\\d{19}$`)),
      status: 'queued',
      model: 'gemini-2.0-flash-001',
      organization_id: on.fake.projectNumber,
      seed: 0,
      ...{ fine_tuned_model: null, trained_tokens: null, finished_at: null, error: null, result_files: [], estimated_finish: null },
      metadata: { team: 'search' },
      hyperparameters: { n_epochs: 2, learning_rate_multiplier: 0.5 },
      method: { type: 'supervised', supervised: { hyperparameters: { n_epochs: 2, learning_rate_multiplier: 0.5 } } },
    }),
    path: ['running', 'succeeded'],
    // Tuning stats as trained tokens; the tuned model, its endpoint and checkpoints as the events and checkpoints say.
    done: (job) => ({
      fine_tuned_model: tuned(job).model,
      trained_tokens: expect.any(Number),
      hyperparameters: { n_epochs: 2, learning_rate_multiplier: 0.5 },
    }),
    events: (events, job, done) => {
      const { model, endpoint } = tuned(job);
      expect(events.map((e) => [e.level, e.message])).toEqual([
        ['info', `Tuning succeeded: tuned model ${model}, served on ${endpoint}`],
        ['info', 'Tuning started'],
        ['info', `Tuning job created: gemini-2.0-flash-001 on ${job.training_file}`],
      ]);
      expect(events[1].data).toEqual({ examples: 12, billable_tokens: done.trained_tokens, steps: 24 });
    },
    checkpoints: (checkpoints, job) =>
      expect(checkpoints).toEqual(
        [...tuned(job).checkpoints].reverse().map((c) => ({
          id: `${job.id.split('/').at(-1)}-checkpoint-${c.checkpointId}`,
          object: 'fine_tuning.job.checkpoint',
          created_at: expect.any(Number),
          fine_tuned_model_checkpoint: c.endpoint,
          step_number: Number(c.step),
          metrics: { epoch: Number(c.epoch), step: Number(c.step) },
          fine_tuning_job_id: job.id,
        })),
      ),
    // One :cancel call, then the job re-read.
    cancel: async (sdk, other) => {
      expect(await sdk.fineTuning.jobs.cancel(other.id)).toMatchObject({ id: other.id, status: 'cancelled', error: null });
      expect(on.fake.state.requests.filter((r) => r.method === 'POST' && r.path === `/v1/${other.id}:cancel`)).toHaveLength(1);
    },
    after: ({ uploaded }) => {
      expect(on.fake.state.storage.buckets.get(BUCKET)!.has(uploaded.id.slice(`gs://${BUCKET}/`.length))).toBe(false);
      // What the job asked of Vertex (the job, then the one cancelled).
      expect(on.fake.state.createJobRequests.at(-2)).toEqual({
        baseModel: 'gemini-2.0-flash-001',
        tunedModelDisplayName: 'cm',
        labels: { team: 'search' },
        supervisedTuningSpec: { trainingDatasetUri: uploaded.id, hyperParameters: { epochCount: 2, learningRateMultiplier: 0.5 } },
      });
    },
    // One token exchange for the whole sequence, its signature verified.
    // The SDK's own Authorization header (`Bearer unused`) is ignored for the key file.
    afterDirect: () => {
      const exchanges = exchangesOf(headerKey);
      expect(exchanges).toHaveLength(1);
      expect(exchanges[0].error).toBeUndefined();
      expect(exchanges[0].header).toEqual({ alg: 'RS256', typ: 'JWT', kid: headerKey.private_key_id });
      const { iat, exp, ...claims } = exchanges[0].claims!;
      expect(claims).toEqual({ iss: headerKey.client_email, scope: CLOUD_PLATFORM_SCOPE, aud: on.fake.tokenUrl });
      expect(Number(exp) - Number(iat)).toBe(3600);
    },
    integration: () => {
      const { 'x-gateway-vertex-service-account-json': _key, ...options } = vertexHeaders(on.fake);
      return { credentials: { service_account_json: JSON.stringify(integrationKey) }, options };
    },
    secrets: () => [integrationKey.private_key_id],
    afterSlug: () => expect(exchangesOf(integrationKey)).toHaveLength(1),
    hostile: [
      ['x-gateway-vertex-region', 'us-central1.evil.com'],
      ['x-gateway-vertex-region', 'evil.com/x'],
      ['x-gateway-vertex-region', 'a@b'],
      ['x-gateway-vertex-project-id', 'fake-project/../other'],
      ['x-gateway-vertex-project-id', 'example.com:project'],
      ['x-gateway-vertex-project-id', 'proj%2f1'],
      ['x-gateway-vertex-storage-bucket-name', 'fake-bucket/o/x?'],
    ],
    hostileCode: 'invalid_setting',
    // The project and region everywhere (the bucket for files only: test/providers/vertex-ai.auth.test.ts).
    required: ['x-gateway-vertex-project-id', 'x-gateway-vertex-region'],
  });

  it("uses the caller's own access token as it is, with no exchange; a refused one is not retried nor echoed", async () => {
    const { 'x-gateway-vertex-service-account-json': _key, ...settings } = vertexHeaders(on.fake);
    const token = on.fake.issueToken();
    const headers = { 'x-gateway-provider': 'vertex-ai', ...settings, authorization: `Bearer ${token}` };
    const exchanges = on.fake.state.oauth.exchanges;
    expect((await clientSdk(on.gw, headers).fineTuning.jobs.list()).data.length).toBeGreaterThan(0);
    expect(on.fake.state.oauth.exchanges).toBe(exchanges);
    expect(on.fake.state.requests.at(-1)?.headers.authorization).toBe(`Bearer ${token}`);
    on.fake.expireTokens(); // there is nothing to renew it with
    const before = on.fake.state.requests.length;
    const res = await api(on.gw, 'GET', '/v1/fine_tuning/jobs', { headers });
    expect(res).toMatchObject({ status: 401, body: { error: { type: 'provider_error', code: 'UNAUTHENTICATED' } } });
    expect(JSON.stringify(res.body)).not.toContain(token);
    expect(on.fake.state.requests.length).toBe(before + 1);
  });

  // A malformed key file: a 400 naming the header and what is wrong, never a 500, never quoting it.
  it.each([
    ['not JSON', 'not a key file', 'is neither a JSON service-account key file nor base64 of one'],
    ['base64 of nonsense', Buffer.from('nonsense').toString('base64'), 'is neither a JSON service-account key file nor base64 of one'],
    ['another kind of key', JSON.stringify({ type: 'authorized_user', client_id: 'x' }), 'type must be "service_account"'],
    ['a key without its private key', JSON.stringify({ type: 'service_account', client_email: 'a@b.iam.gserviceaccount.com' }), 'private_key is missing'],
    [
      'a broken private key',
      JSON.stringify({ type: 'service_account', client_email: 'a@b.iam.gserviceaccount.com', private_key: 'garbage' }),
      'not a PEM private key',
    ],
  ])('refuses %s as a key file before any connection', async (_case, value, reason) => {
    const before = on.fake.state.requests.length;
    const headers = { 'x-gateway-provider': 'vertex-ai', ...vertexHeaders(on.fake), 'x-gateway-vertex-service-account-json': value };
    const { status, body } = await api(on.gw, 'GET', '/v1/fine_tuning/jobs', { headers });
    expect(status).toBe(400);
    expect(body.error).toMatchObject({ type: 'invalid_request_error', param: 'x-gateway-vertex-service-account-json', code: 'invalid_setting' });
    expect(body.error.message).toContain(reason);
    expect(body.error.message).not.toContain(value);
    expect(on.fake.state.requests.length).toBe(before);
  });

  it('refuses an integration whose key file is malformed when it is stored', async () => {
    const options = { 'x-gateway-vertex-project-id': 'p-123456', 'x-gateway-vertex-region': 'us-central1' };
    const body = { slug: 'bad-vertex', provider: 'vertex-ai', credentials: { service_account_json: '{"type":"service_account"}' }, options };
    const res = await api(on.gw, 'POST', '/v1/integrations', { body });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ param: 'credentials.service_account_json', message: expect.stringContaining('client_email is missing') });
  });

  it.each([
    [
      'a tool call',
      [
        { role: 'user', content: 'x' },
        { role: 'assistant', tool_calls: [{ id: 't' }] },
      ],
      'line 2: messages[1]: tool calls cannot be converted',
    ],
    ['a tool message', [{ role: 'tool', content: 'x' }], 'line 2: messages[0]: role must be system, developer, user or assistant'],
    ['no final assistant turn', [{ role: 'user', content: 'x' }], 'line 2: the last message must be from the assistant'],
    [
      'a late system message',
      [
        { role: 'user', content: 'x' },
        { role: 'system', content: 'y' },
        { role: 'assistant', content: 'z' },
      ],
      'line 2: messages[1]: a system message must come before',
    ],
    [
      'an image',
      [
        { role: 'user', content: [{ type: 'image_url', image_url: { url: 'x' } }] },
        { role: 'assistant', content: 'z' },
      ],
      'only text content',
    ],
  ])('refuses a dataset line with %s with a 400 naming the line, storing nothing', async (_case, messages, reason) => {
    const sdk = clientSdk(on.gw, { 'x-gateway-provider': 'vertex-ai', ...vertexHeaders(on.fake) });
    const stored = on.fake.state.storage.buckets.get(BUCKET)!.size;
    const bad = `${example(1)}\n${JSON.stringify({ messages })}\n`;
    const refused = await sdk.files.create({ file: await toFile(Buffer.from(bad), 'bad.jsonl'), purpose: 'fine-tune' }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ status: 400, error: { code: 'invalid_dataset', message: expect.stringContaining(reason) } });
    expect(on.fake.state.storage.buckets.get(BUCKET)!.size).toBe(stored);
  });
});
