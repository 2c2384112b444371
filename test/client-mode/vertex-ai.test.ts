/**
 * Client mode with Vertex AI on the client-mode contract (test/support/client-mode-kit.ts), against
 * the fake Google Cloud: a service-account key in a header, in a stored integration (`@slug`), or the
 * caller's own access token; here what is Vertex's own: Gemini lines in gs://, resource names as ids,
 * one verified token exchange per sequence, malformed key files refused, its errors relayed.
 */
import { toFile } from 'openai';
import { createServiceAccount, type ServiceAccountKey } from '../fakes/google-auth';
import { startFakeVertex } from '../fakes/vertex-server';
import { dataset, example } from '../fine-tuning/harness';
import { clientModeContract, clientSdk } from '../support/client-mode-kit';
import { api, gatewayOnFake } from '../support/gateway';
import { BUCKET, fakeEndpoints, vertexHeaders } from '../providers/vertex-ai.support';

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

/** What the Gemini line of harness example `n` is. */
const geminiExample = (n: number) => ({
  systemInstruction: { parts: [{ text: 'You are terse.' }] },
  contents: [
    { role: 'user', parts: [{ text: `Question ${n}` }] },
    { role: 'model', parts: [{ text: `Answer ${n}` }] },
  ],
});

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
    stored: (uploaded) => {
      const lines = storedObject(uploaded.id).data.toString('utf8').trimEnd().split('\n');
      expect(lines.map((line) => JSON.parse(line))).toEqual(Array.from({ length: 12 }, (_, i) => geminiExample(i + 1)));
    },
    unpagedFileList: true,
    retrieved: (uploaded) => ({ bytes: storedObject(uploaded.id).data.length }),
    content: (uploaded) => storedObject(uploaded.id).data.toString('utf8'),
    // The Google Cloud project the job runs in; Vertex AI takes no seed: 0.
    job: () => ({
      id: expect.stringMatching(/\/tuningJobs\/\d+$/),
      status: 'queued',
      model: 'gemini-2.0-flash-001',
      organization_id: on.fake.projectNumber,
      seed: 0,
    }),
    path: ['running', 'succeeded'],
    done: () => ({ fine_tuned_model: expect.stringMatching(/\/models\/\d+@1$/), trained_tokens: expect.any(Number), hyperparameters: { n_epochs: 2 } }),
    events: (events) =>
      expect(events.map((e) => e.message)).toEqual([
        expect.stringContaining('Tuning succeeded'),
        'Tuning started',
        expect.stringContaining('Tuning job created'),
      ]),
    checkpoints: (checkpoints, job) =>
      expect(checkpoints.map((c) => [c.object, c.step_number, c.fine_tuning_job_id])).toEqual([
        ['fine_tuning.job.checkpoint', 24, job.id],
        ['fine_tuning.job.checkpoint', 12, job.id],
      ]),
    cancel: async (sdk, other) => expect(await sdk.fineTuning.jobs.cancel(other.id)).toMatchObject({ id: other.id, status: 'cancelled', error: null }),
    after: ({ uploaded }) => expect(on.fake.state.storage.buckets.get(BUCKET)!.has(uploaded.id.slice(`gs://${BUCKET}/`.length))).toBe(false),
    // One token exchange for the whole sequence, its signature verified.
    afterDirect: () => {
      const exchanges = exchangesOf(headerKey);
      expect(exchanges).toHaveLength(1);
      expect(exchanges[0]).toMatchObject({ header: { alg: 'RS256' }, claims: { aud: on.fake.tokenUrl } });
      expect(exchanges[0].error).toBeUndefined();
    },
    integration: () => {
      const { 'x-gateway-vertex-service-account-json': _key, ...options } = vertexHeaders(on.fake);
      return { credentials: { service_account_json: JSON.stringify(integrationKey) }, options };
    },
    secrets: () => [integrationKey.private_key_id],
    afterSlug: () => expect(exchangesOf(integrationKey)).toHaveLength(1),
    hostile: [
      ['x-gateway-vertex-region', 'us-central1.evil.com'],
      ['x-gateway-vertex-project-id', 'fake-project/../other'],
      ['x-gateway-vertex-storage-bucket-name', 'fake-bucket/o/x?'],
      // A key file that is not JSON, not a service-account key, base64 of nonsense: a 400, never a 500.
      ['x-gateway-vertex-service-account-json', '{not json'],
      ['x-gateway-vertex-service-account-json', JSON.stringify({ type: 'external_account' })],
      ['x-gateway-vertex-service-account-json', Buffer.from('nonsense').toString('base64')],
    ],
    hostileCode: 'invalid_setting',
    required: [],
  });

  it("uses the caller's own access token, with no exchange", async () => {
    const { 'x-gateway-vertex-service-account-json': _key, ...settings } = vertexHeaders(on.fake);
    const exchanges = on.fake.state.oauth.exchanges;
    const jobs = await clientSdk(on.gw, {
      'x-gateway-provider': 'vertex-ai',
      ...settings,
      authorization: `Bearer ${on.fake.issueToken()}`,
    }).fineTuning.jobs.list();
    expect(jobs.data.length).toBeGreaterThan(0);
    expect(on.fake.state.oauth.exchanges).toBe(exchanges);
  });

  it('refuses an integration whose key file is malformed when it is stored', async () => {
    const res = await api(on.gw, 'POST', '/v1/integrations', {
      body: {
        slug: 'bad-vertex',
        provider: 'vertex-ai',
        credentials: { service_account_json: '{"type":"service_account"}' },
        options: { 'x-gateway-vertex-project-id': 'p-123456', 'x-gateway-vertex-region': 'us-central1' },
      },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain('client_email is missing');
  });

  it('answers a dataset line it cannot convert with a 400 naming the line', async () => {
    const sdk = clientSdk(on.gw, { 'x-gateway-provider': 'vertex-ai', ...vertexHeaders(on.fake) });
    const bad = `${example(1)}\n${JSON.stringify({ messages: [{ role: 'user', content: 'only a question' }] })}\n`;
    const refused = await sdk.files.create({ file: await toFile(Buffer.from(bad), 'bad.jsonl'), purpose: 'fine-tune' }).catch((e: unknown) => e);
    expect(refused).toMatchObject({
      status: 400,
      error: { code: 'invalid_dataset', message: expect.stringContaining('line 2: the last message must be from the assistant') },
    });
  });
});
