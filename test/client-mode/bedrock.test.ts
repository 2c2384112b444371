/**
 * Client mode with Amazon Bedrock over HTTP, through the official OpenAI SDK, against the fake
 * Bedrock (S3, control plane; SigV4 recomputed on every request): AWS credentials in headers and in a
 * stored integration (`@slug`); a 12-example chat dataset (one without a system message) lands in S3
 * in the base model's format, every line present; jobs created, followed, listed and cancelled in
 * OpenAI's shapes with Bedrock's own ids (S3 URIs, job ARNs) round-tripping through the paths;
 * hostile settings refused before any connection; AWS errors relayed without a credential.
 */
import type OpenAI from 'openai';
import { toFile } from 'openai';
import { startFakeBedrock, type FakeBedrock } from '../fakes/bedrock-server';
import { gatewaySdk } from '../support/answers';
import { api, startTestGateway, type TestGateway } from '../support/gateway';
import { awsHeaders, chatDataset, CLAUDE, DEFAULT_BUCKET, fakeEndpoints, NOVA, ROLE_ARN, storedLines } from '../providers/bedrock-harness';

let fake: FakeBedrock;
let gw: TestGateway;

beforeAll(async () => {
  fake = await startFakeBedrock();
  gw = await startTestGateway({ ...fakeEndpoints(fake), GATEWAY_PROVIDER_TIMEOUT_MS: '5000' });
});

afterAll(async () => {
  await gw.stop();
  await fake.close();
});

const HEADERS = () => ({ 'x-gateway-provider': 'bedrock', ...awsHeaders(fake) });

/** The OpenAI SDK in client mode: Bedrock settings as headers, the gateway's key in its own. */
const client = (headers: Record<string, string>) => gatewaySdk(gw, { headers });

/** Every request the fake saw had a signature it recomputed and accepted. */
function expectEverySignatureVerified() {
  expect(fake.state.sigv4.s3.failures).toEqual([]);
  expect(fake.state.sigv4.control.failures).toEqual([]);
  expect(fake.state.sigv4.s3.verified).toBe(fake.s3.state.requests.length);
  expect(fake.state.sigv4.control.verified).toBe(fake.control.requests.length);
}

/** Upload → get/content/list → create → follow → list → events/checkpoints → cancel another → delete. */
async function exercise(sdk: OpenAI, model: string, check: (line: unknown, n: number) => void) {
  const content = chatDataset(12);
  const file = await sdk.files.create({ file: await toFile(Buffer.from(content), 'train.jsonl'), purpose: 'fine-tune' });
  expect(file).toMatchObject({
    id: expect.stringMatching(new RegExp(`^s3://${DEFAULT_BUCKET}/gateway-files/`)),
    object: 'file',
    purpose: 'fine-tune',
    status: 'processed',
    filename: 'train.jsonl',
  });
  const lines = storedLines(fake, file.id);
  expect(lines).toHaveLength(12);
  lines.forEach(check);

  expect(await sdk.files.retrieve(file.id)).toMatchObject({ id: file.id, bytes: file.bytes, object: 'file' });
  expect((await (await sdk.files.content(file.id)).text()).trim().split('\n')).toHaveLength(12);
  const files = await sdk.files.list();
  expect(files.data.map((f) => f.id)).toContain(file.id);
  // The last page: no page token, so last_id is the last file's id, as OpenAI answers.
  const listed = await (await sdk.files.list().asResponse()).json();
  expect(listed).toMatchObject({ has_more: false, first_id: files.data[0].id, last_id: files.data.at(-1)!.id });

  const job = await sdk.fineTuning.jobs.create({
    model,
    training_file: file.id,
    suffix: 'cm',
    method: { type: 'supervised', supervised: { hyperparameters: { n_epochs: 2 } } },
  });
  expect(job).toMatchObject({ object: 'fine_tuning.job', status: 'validating_files', model, training_file: file.id, suffix: 'cm', fine_tuned_model: null });
  expect(job.id).toMatch(/^arn:aws:bedrock:us-east-1:123456789012:model-customization-job\//);
  // The AWS account of the job; Bedrock takes no seed: 0.
  expect(job).toMatchObject({ organization_id: '123456789012', seed: 0 });
  let current = job;
  for (let i = 0; i < 5 && current.status !== 'succeeded'; i++) current = await sdk.fineTuning.jobs.retrieve(job.id);
  expect(current).toMatchObject({
    id: job.id,
    status: 'succeeded',
    fine_tuned_model: fake.state.jobs.get(job.id)!.outputModelArn,
    hyperparameters: { n_epochs: 2 },
  });
  expect(current.finished_at).toEqual(expect.any(Number));

  const jobs = await sdk.fineTuning.jobs.list({ limit: 50 });
  expect(jobs.data.map((j) => j.id)).toContain(job.id);
  // Bedrock's list has no hyperparameters: "auto" (not chosen here) rather than missing.
  expect(jobs.data.find((j) => j.id === job.id)?.hyperparameters).toEqual({ n_epochs: 'auto', batch_size: 'auto', learning_rate_multiplier: 'auto' });
  const events = await sdk.fineTuning.jobs.listEvents(job.id, { limit: 100 });
  expect(events.data[0]).toMatchObject({
    object: 'fine_tuning.job.event',
    message: expect.stringMatching(/^The job has successfully completed/),
    level: 'info',
  });
  expect(events.data.some((e) => e.type === 'metrics')).toBe(true);
  const checkpoints = await sdk.fineTuning.jobs.checkpoints.list(job.id);
  expect(checkpoints.data).toEqual([
    expect.objectContaining({ object: 'fine_tuning.job.checkpoint', fine_tuning_job_id: job.id, fine_tuned_model_checkpoint: current.fine_tuned_model }),
  ]);

  const other = await sdk.fineTuning.jobs.create({ model, training_file: file.id });
  const cancelled = await sdk.fineTuning.jobs.cancel(other.id);
  expect(cancelled.id).toBe(other.id);
  expect(['running', 'cancelled']).toContain(cancelled.status);
  expect(await sdk.fineTuning.jobs.retrieve(other.id)).toMatchObject({ status: 'cancelled' });
  expect(fake.state.jobs.get(other.id)!.status).toBe('Stopped');

  expect(await sdk.files.delete(file.id)).toMatchObject({ id: file.id, deleted: true });
  return { file, job };
}

describe('client mode with Amazon Bedrock', () => {
  it('forwards every files and fine-tuning call with AWS credentials in headers (Nova: Converse records)', async () => {
    const sdk = client({ ...HEADERS(), 'x-gateway-provider-model': NOVA });
    await exercise(sdk, NOVA, (line, n) => {
      expect(line).toMatchObject({ schemaVersion: 'bedrock-conversation-2024', messages: [{ role: 'user' }, { role: 'assistant' }] });
      expect(Object.hasOwn(line as object, 'system')).toBe(n !== 4);
    });
    expect(fake.state.createJobRequests.at(-1)).toMatchObject({ roleArn: ROLE_ARN, baseModelIdentifier: NOVA });
    expect(fake.state.createJobRequests[0]).toMatchObject({ customModelName: 'cm', hyperParameters: { epochCount: '2' } });
    // Client mode stores nothing.
    expect((await api(gw, 'GET', '/v1/files')).body.data).toEqual([]);
    expect((await api(gw, 'GET', '/v1/fine_tuning/jobs')).body.data).toEqual([]);
    expectEverySignatureVerified();
  });

  it('works with a stored integration (@slug), its options and provider_options.role_arn (Claude records)', async () => {
    const { 'x-gateway-provider': _provider, 'x-gateway-aws-access-key-id': id, 'x-gateway-aws-secret-access-key': secret, ...options } = HEADERS();
    const { 'x-gateway-aws-role-arn': _role, ...withoutRole } = options;
    const created = await api(gw, 'POST', '/v1/integrations', {
      body: {
        slug: 'cm-bedrock',
        provider: 'bedrock',
        name: 'Bedrock',
        credentials: { aws_access_key_id: id, aws_secret_access_key: secret },
        options: withoutRole,
      },
    });
    expect(created.status).toBe(200);
    const sdk = client({ 'x-gateway-provider': '@cm-bedrock', 'x-gateway-provider-model': CLAUDE });
    const file = await sdk.files.create({ file: await toFile(Buffer.from(chatDataset(12)), 'train.jsonl'), purpose: 'fine-tune' });
    const lines = storedLines(fake, file.id);
    expect(lines).toHaveLength(12);
    expect(lines[0]).toEqual({
      system: 'You are terse.',
      messages: [
        { role: 'user', content: 'Question 1?' },
        { role: 'assistant', content: 'Answer 1.' },
      ],
    });
    expect(lines[4]).toEqual({
      messages: [
        { role: 'user', content: 'Question 5?' },
        { role: 'assistant', content: 'Answer 5.' },
      ],
    });

    const noRole = await api(gw, 'POST', '/v1/fine_tuning/jobs', {
      headers: { 'x-gateway-provider': '@cm-bedrock' },
      body: { model: CLAUDE, training_file: file.id },
    });
    expect(noRole.status).toBe(400);
    expect(noRole.body.error).toMatchObject({ param: 'x-gateway-aws-role-arn', code: 'missing_setting' });

    const job = await sdk.fineTuning.jobs.create({
      model: CLAUDE,
      training_file: file.id,
      provider_options: { role_arn: ROLE_ARN },
    } as OpenAI.FineTuning.JobCreateParams);
    expect(job.id).toMatch(/model-customization-job\/anthropic\./);
    expect(fake.state.createJobRequests.at(-1)).toMatchObject({ roleArn: ROLE_ARN, baseModelIdentifier: CLAUDE });
    const page = await sdk.fineTuning.jobs.list({ limit: 1 });
    expect(page.data).toEqual([expect.objectContaining({ id: job.id, object: 'fine_tuning.job' })]);
    const raw = await api(gw, 'GET', '/v1/fine_tuning/jobs?limit=1', { headers: { 'x-gateway-provider': '@cm-bedrock' } });
    expect(raw.body).toMatchObject({ has_more: true, last_id: expect.any(String) });
    const next = await api(gw, 'GET', `/v1/fine_tuning/jobs?limit=1&after=${encodeURIComponent(raw.body.last_id)}`, {
      headers: { 'x-gateway-provider': '@cm-bedrock' },
    });
    expect(next.body.data[0].id).not.toBe(job.id);
    expectEverySignatureVerified();
  });

  it.each([
    ['x-gateway-aws-region', 'us-east-1/../x'],
    ['x-gateway-aws-region', 'evil.com'],
    ['x-gateway-aws-s3-bucket', 'a/b'],
    ['x-gateway-aws-s3-bucket', 'a@b'],
    ['x-gateway-aws-s3-object-key', 'a/../../b'],
  ])('refuses %s %j with 400 naming it, before any connection', async (header, hostile) => {
    const before = fake.s3.state.requests.length + fake.control.requests.length;
    const res = await api(gw, 'GET', '/v1/files', { headers: { ...HEADERS(), [header]: hostile } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', param: header });
    expect(fake.s3.state.requests.length + fake.control.requests.length).toBe(before);
  });

  it('refuses a job without a role, and an upload without its base model, naming the header', async () => {
    const { 'x-gateway-aws-role-arn': _role, ...headers } = HEADERS();
    const noRole = await api(gw, 'POST', '/v1/fine_tuning/jobs', { headers, body: { model: NOVA, training_file: `s3://${DEFAULT_BUCKET}/x.jsonl` } });
    expect(noRole.status).toBe(400);
    expect(noRole.body.error).toMatchObject({ param: 'x-gateway-aws-role-arn', code: 'missing_setting' });
    const noModel = client(HEADERS()).files.create({ file: await toFile(Buffer.from(chatDataset(12)), 'train.jsonl'), purpose: 'fine-tune' });
    await expect(noModel).rejects.toMatchObject({ status: 400, error: { param: 'x-gateway-provider-model', code: 'missing_setting' } });
  });

  it('relays AWS errors in the gateway shape: 404, ThrottlingException 429, a wrong secret 403 without echoing it', async () => {
    const headers = HEADERS();
    const missing = await api(gw, 'GET', `/v1/fine_tuning/jobs/${encodeURIComponent('no-such-job')}`, { headers });
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatchObject({ type: 'provider_error', code: 'ResourceNotFoundException' });

    fake.control.failNext('GET', '/model-customization-jobs', 429, { times: 3 });
    const throttled = await api(gw, 'GET', '/v1/fine_tuning/jobs', { headers });
    expect(throttled.status).toBe(429);
    expect(throttled.body.error).toMatchObject({ type: 'provider_error', code: 'ThrottlingException' });

    const wrong = 'a-wrong-secret-for-the-test';
    const denied = await api(gw, 'GET', '/v1/fine_tuning/jobs', { headers: { ...headers, 'x-gateway-aws-secret-access-key': wrong } });
    expect(denied.status).toBe(403);
    expect(denied.body.error).toMatchObject({ type: 'provider_error', code: 'InvalidSignatureException' });
    expect(JSON.stringify(denied.body)).not.toContain(wrong);
  });
});
