/**
 * Client mode with Amazon Bedrock on the client-mode contract (test/support/client-mode-kit.ts),
 * against the fake Bedrock (S3, control plane; SigV4 recomputed on every request); here what is
 * Bedrock's own: Nova and Claude records in S3 (one example without a system message), S3 URIs and
 * job ARNs as ids, a stored integration with provider_options.role_arn, role and a known base
 * model required, AWS errors relayed.
 */
import type OpenAI from 'openai';
import { toFile } from 'openai';
import { startFakeBedrock } from '../fakes/bedrock-server';
import { clientModeContract, clientSdk } from '../support/client-mode-kit';
import { api, gatewayOnFake } from '../support/gateway';
import { awsHeaders, chatDataset, CLAUDE, DEFAULT_BUCKET, expectRecords, fakeEndpoints, NOVA, ROLE_ARN, storedLines } from '../providers/bedrock-harness';

const on = gatewayOnFake(
  () => startFakeBedrock(),
  (fake) => ({ ...fakeEndpoints(fake), GATEWAY_PROVIDER_TIMEOUT_MS: '5000' }),
);

const HEADERS = () => ({ 'x-gateway-provider': 'bedrock', ...awsHeaders(on.fake) });

const client = (headers: Record<string, string>) => clientSdk(on.gw, headers);

/** Every request the fake saw had a signature it recomputed and accepted. */
function expectEverySignatureVerified() {
  expect(on.fake.state.sigv4.s3.failures).toEqual([]);
  expect(on.fake.state.sigv4.control.failures).toEqual([]);
  expect(on.fake.state.sigv4.s3.verified).toBe(on.fake.s3.state.requests.length);
  expect(on.fake.state.sigv4.control.verified).toBe(on.fake.control.requests.length);
}

/** The converted dataset the fake's S3 holds at `uri`. */
function storedText(uri: string): string {
  const [, bucket, key] = /^s3:\/\/([^/]+)\/(.+)$/.exec(uri)!;
  return on.fake.s3.getObject(bucket, key)!.toString('utf8');
}

describe('client mode with Amazon Bedrock', () => {
  // Nova: Converse records, the system message present except on the example without one.
  const contract = clientModeContract({
    gw: () => on.gw,
    headers: () => ({ ...HEADERS(), 'x-gateway-provider-model': NOVA }),
    seen: () => on.fake.s3.state.requests.length + on.fake.control.requests.length,
    errors: {
      fake: () => on.fake.control,
      listPath: '/model-customization-jobs',
      unknownJob: 'no-such-job',
      codes: { notFound: 'ResourceNotFoundException', throttled: 'ThrottlingException' },
      get secret() {
        return on.fake.credentials.secretAccessKey;
      },
      // The gateway here waits 5 s for a provider, longer than the contract's slow answer: the adapter contract checks Bedrock's 504.
      timesOut: false,
      // The fake answers an injected failure before checking its signature: after the signature checks below.
      deferred: true,
    },
    dataset: () => chatDataset(12),
    model: NOVA,
    // A key of its own under the gateway's prefix: a timestamp, a random part, the filename.
    file: () => ({
      id: expect.stringMatching(new RegExp(`^s3://${DEFAULT_BUCKET}/gateway-files/\\d{8}T\\d{6}\\.\\d{3}Z-[0-9a-f]{12}/train\\.jsonl$`)),
      status: 'processed',
    }),
    stored: (uploaded) => {
      expect(uploaded.bytes).toBe(Buffer.byteLength(storedText(uploaded.id)));
      expectRecords(storedLines(on.fake, uploaded.id), NOVA);
    },
    retrieved: (uploaded) => ({ bytes: uploaded.bytes }),
    content: (uploaded) => storedText(uploaded.id),
    unpagedFileList: true,
    // The AWS account of the job; Bedrock takes no seed: 0.
    job: () => ({
      id: expect.stringMatching(/^arn:aws:bedrock:us-east-1:123456789012:model-customization-job\//),
      status: 'validating_files',
      model: NOVA,
      fine_tuned_model: null,
      organization_id: '123456789012',
      seed: 0,
    }),
    // Bedrock's list has no hyperparameters: "auto" (not chosen here) rather than missing.
    listed: (job) => expect(job.hyperparameters).toEqual({ n_epochs: 'auto', batch_size: 'auto', learning_rate_multiplier: 'auto' }),
    done: (job) => ({ fine_tuned_model: on.fake.state.jobs.get(job.id)!.outputModelArn, hyperparameters: { n_epochs: 2 } }),
    events: (events) => {
      expect(events[0]).toMatchObject({ message: expect.stringMatching(/^The job has successfully completed/), level: 'info' });
      expect(events.some((e) => e.type === 'metrics')).toBe(true);
    },
    // The checkpoint is the custom model: exactly in providers/bedrock.jobs, through HTTP in fine-tuning/bedrock-hosted.
    cancel: async (sdk, other) => {
      const cancelled = await sdk.fineTuning.jobs.cancel(other.id);
      expect(cancelled.id).toBe(other.id);
      expect(['running', 'cancelled']).toContain(cancelled.status);
      expect(await sdk.fineTuning.jobs.retrieve(other.id)).toMatchObject({ status: 'cancelled' });
      expect(on.fake.state.jobs.get(other.id)!.status).toBe('Stopped');
    },
    // What CreateModelCustomizationJob receives: providers/bedrock.jobs (role from the header) and fine-tuning/bedrock-hosted.
    afterDirect: () => expectEverySignatureVerified(),
    hostile: [
      ...['us-east-1/../x', 'evil.com', 'us-east-1@evil'].map((v) => ['x-gateway-aws-region', v] as [string, string]),
      ...['a/b', 'a..b', 'a@b', '192.168.0.1', 'b%2f'].map((v) => ['x-gateway-aws-s3-bucket', v] as [string, string]),
      ['x-gateway-aws-s3-object-key', '../escape.jsonl'],
      ['x-gateway-aws-s3-object-key', 'a/../../b'],
      ['x-gateway-aws-access-key-id', 'not a key'],
      ['x-gateway-aws-role-arn', 'arn:aws:iam::1:role/x'],
    ],
    hostileCode: 'invalid_setting',
    required: [],
    wrongKey: { header: 'x-gateway-aws-secret-access-key', value: 'a-wrong-secret-for-the-test', status: 403, error: { code: 'InvalidSignatureException' } },
  });

  // Every call answered proves its signature: the fake refuses one it cannot recompute (the wrong secret above).
  it('works with a stored integration (@slug), its options and provider_options.role_arn (Claude records)', async () => {
    const { 'x-gateway-provider': _provider, 'x-gateway-aws-access-key-id': id, 'x-gateway-aws-secret-access-key': secret, ...options } = HEADERS();
    const { 'x-gateway-aws-role-arn': _role, ...withoutRole } = options;
    const credentials = { aws_access_key_id: id, aws_secret_access_key: secret };
    const created = await api(on.gw, 'POST', '/v1/integrations', {
      body: { slug: 'cm-bedrock', provider: 'bedrock', name: 'Bedrock', credentials, options: withoutRole },
    });
    expect(created.status).toBe(200);
    const sdk = client({ 'x-gateway-provider': '@cm-bedrock', 'x-gateway-provider-model': CLAUDE });
    const file = await sdk.files.create({ file: await toFile(Buffer.from(chatDataset(12)), 'train.jsonl'), purpose: 'fine-tune' });
    expectRecords(storedLines(on.fake, file.id), CLAUDE);

    const body = { model: CLAUDE, training_file: file.id };
    const noRole = await api(on.gw, 'POST', '/v1/fine_tuning/jobs', { headers: { 'x-gateway-provider': '@cm-bedrock' }, body });
    expect(noRole.status).toBe(400);
    expect(noRole.body.error).toMatchObject({ param: 'x-gateway-aws-role-arn', code: 'missing_setting' });

    const job = await sdk.fineTuning.jobs.create({ ...body, provider_options: { role_arn: ROLE_ARN } } as OpenAI.FineTuning.JobCreateParams);
    expect(job.id).toMatch(/model-customization-job\/anthropic\./);
    expect(on.fake.state.createJobRequests.at(-1)).toMatchObject({ roleArn: ROLE_ARN, baseModelIdentifier: CLAUDE });
    const page = await api(on.gw, 'GET', '/v1/fine_tuning/jobs?limit=1', { headers: { 'x-gateway-provider': '@cm-bedrock' } });
    expect(page.body).toMatchObject({ has_more: true, data: [{ id: job.id, object: 'fine_tuning.job' }] });
  });

  it.each([
    ['without its base model', {}, { param: 'x-gateway-provider-model', code: 'missing_setting' }],
    [
      'for a model whose format it does not know',
      { 'x-gateway-provider-model': 'mistral.mistral-large-v1:0' },
      { code: 'unsupported_model', message: expect.stringContaining("'mistral.mistral-large-v1:0'") },
    ],
  ])('refuses an upload %s, before any request', async (_what, model, error) => {
    const before = on.fake.s3.state.requests.length;
    const upload = client({ ...HEADERS(), ...model }).files.create({ file: await toFile(Buffer.from(chatDataset(12)), 'train.jsonl'), purpose: 'fine-tune' });
    await expect(upload).rejects.toMatchObject({ status: 400, error });
    expect(on.fake.s3.state.requests).toHaveLength(before);
  });

  contract.errors();
});
