/**
 * The client-mode contract: what every provider must do when a caller names it in
 * `x-gateway-provider` and talks to the gateway with the official OpenAI SDK. Every files and
 * fine-tuning route (upload, list, retrieve, content, job create / list / follow / events /
 * checkpoints, cancel, delete) with the provider's settings in headers and through a stored
 * integration (`@slug`); nothing stored by the gateway; hostile or missing settings refused with a
 * 400 naming the header before any connection; a wrong credential never echoed. A provider's
 * client-mode file calls `clientModeContract` with its fake's view and keeps only what no other
 * provider has (its wire format, its error words, its paging).
 */
import type OpenAI from 'openai';
import { toFile } from 'openai';
import type { FakeServer } from '../fakes/kit';
import { gatewaySdk } from './answers';
import { api, type TestGateway } from './gateway';

type Headers = Record<string, string>;
type Job = OpenAI.FineTuning.FineTuningJob;

/** What one pass over every route produced, for the provider's own checks afterwards. */
export interface Exercised {
  uploaded: OpenAI.Files.FileObject;
  content: string;
  job: Job;
  done: Job;
  other: Job;
}

/** A provider's side of the contract. Functions, so that each test reads what `beforeAll` started. */
export interface ClientModeSpec {
  gw(): TestGateway;
  /** Raw headers that reach the provider with settings in headers: `x-gateway-provider`, its settings, the key in `authorization`. */
  headers(): Headers;
  /** Requests the provider's fake(s) have seen so far, to show a refusal made none. */
  seen(): number;
  /** The JSONL dataset uploaded. */
  dataset(): string;
  /** The base model of the jobs. */
  model: string;
  /** What the upload answers besides id matching, object, filename. */
  file(content: string): Record<string, unknown>;
  /** What the created job answers besides object, model, training file, suffix. */
  job(): Record<string, unknown> | Promise<Record<string, unknown>>;
  /** What the provider holds right after the upload (the exact bytes, or its converted lines). */
  stored?(uploaded: OpenAI.Files.FileObject, content: string): void;
  /** What retrieving the upload answers besides id, object, purpose, filename. */
  retrieved?(uploaded: OpenAI.Files.FileObject): Record<string, unknown>;
  /** Added to the create call (provider_options, hyperparameters the provider needs). */
  create?: Record<string, unknown>;
  /** The create call of the job that is cancelled (beside model and training file). */
  other?: Record<string, unknown>;
  /** The file's content as served back; the uploaded text unless the provider converts it. */
  content?(uploaded: OpenAI.Files.FileObject, content: string): string;
  /** Where the file list is one page (no page token): first_id/last_id/has_more as OpenAI answers. */
  unpagedFileList?: boolean;
  /** The job as the job list shows it. */
  listed?(job: Job): void;
  /** The statuses retrieving the job reads until it succeeded, where the fake walks a fixed path. */
  path?: string[];
  /** What the succeeded job answers besides id and status. */
  done?(job: Job): Record<string, unknown>;
  /** The provider's events and checkpoints of the succeeded job. */
  events?(events: OpenAI.FineTuning.FineTuningJobEvent[], job: Job, done: Job): void;
  checkpoints?(checkpoints: OpenAI.FineTuning.Jobs.FineTuningJobCheckpoint[], job: Job, done: Job): void;
  /** Cancels `other` and checks the answer; by default the SDK's cancel answers `cancelled`. */
  cancel?(sdk: OpenAI, other: Job, done: Job): Promise<void>;
  /** Checks on the provider's side after a whole pass (exact bytes stored, fields sent, file removed). */
  after?(exercised: Exercised): void;
  /** Checks after the pass with settings in headers (the key reached the provider, as it should). */
  afterDirect?(): void;
  /** The integration body (without slug) holding the same credentials; absent where the file tests it its own way. */
  integration?(): Record<string, unknown>;
  /** Checks after the pass through the integration. */
  afterSlug?(): void;
  /** What the integration's answer must not hold; by default its credentials' values. */
  secrets?(): string[];
  /** Headers beside `x-gateway-provider: @slug` (settings an integration leaves to the call). */
  slugHeaders?(): Headers;
  /** Settings that must not reach a URL: [header, value]; each refused naming the header. */
  hostile: Array<[string, string]>;
  /** The code of those refusals, where the provider names one. */
  hostileCode?: string;
  /** Settings whose absence is a 400 `missing_setting` naming them (`authorization` for the key). */
  required: string[];
  /** A wrong credential: answered `status` with `error`, its value nowhere in the answer. */
  wrongKey?: { header: string; value: string; status: number; error: Record<string, unknown> };
  /** The provider's errors mapped on a job list and an unknown job: 404, 429 once retries are spent, 5xx → 502, time-out → 504. */
  errors: ProviderErrors;
}

export interface ProviderErrors {
  /** The fake server the job list goes to, for injected failures and delays. */
  fake(): Pick<FakeServer, 'failNext' | 'delayNext'>;
  /** The path of the provider's job list on that server. */
  listPath: string;
  /** A job id of the provider's form that names no job. */
  unknownJob: string;
  /** The provider's codes for a missing job and for throttling, where it names them. */
  codes?: { notFound?: string; throttled?: string };
  /** The credential the provider's error messages quote (it must not reach the answer). */
  secret: string;
  /** False where the gateway under test waits longer for this provider than the contract delays (no time-out check). */
  timesOut?: boolean;
  /** Registered by the caller (`errors()` of the contract's answer) after its own tests: the injected failures would upset their checks. */
  deferred?: boolean;
}

/** The OpenAI SDK in client mode: the key in `authorization` becomes the SDK's apiKey, the rest headers. */
export function clientSdk(gw: TestGateway, headers: Headers, onAnswer?: (text: string) => void): OpenAI {
  const { authorization, ...rest } = headers;
  return gatewaySdk(gw, { apiKey: authorization?.replace(/^Bearer /, '') ?? 'unused', headers: rest, onAnswer });
}

async function exerciseFiles(spec: ClientModeSpec, sdk: OpenAI) {
  const content = spec.dataset();
  const uploaded = await sdk.files.create({ file: await toFile(Buffer.from(content), 'train.jsonl'), purpose: 'fine-tune' });
  expect(uploaded).toMatchObject({ object: 'file', filename: 'train.jsonl', purpose: 'fine-tune', ...spec.file(content) });
  spec.stored?.(uploaded, content);
  const files = await sdk.files.list();
  expect(files.data.map((f) => f.id)).toContain(uploaded.id);
  if (spec.unpagedFileList) {
    // The last page: no page token, so last_id is the last file's id, as OpenAI answers.
    const listed = await (await sdk.files.list().asResponse()).json();
    expect(listed).toMatchObject({ has_more: false, first_id: files.data[0].id, last_id: files.data.at(-1)!.id });
  }
  expect(await sdk.files.retrieve(uploaded.id)).toMatchObject({
    id: uploaded.id,
    object: 'file',
    purpose: 'fine-tune',
    filename: 'train.jsonl',
    ...spec.retrieved?.(uploaded),
  });
  expect(await (await sdk.files.content(uploaded.id)).text()).toBe(spec.content ? spec.content(uploaded, content) : content);
  return { uploaded, content };
}

/** Upload → list → retrieve → content → create → list → follow → events → checkpoints → cancel another → delete. */
async function exercise(spec: ClientModeSpec, sdk: OpenAI): Promise<Exercised> {
  const { uploaded, content } = await exerciseFiles(spec, sdk);
  const method = { type: 'supervised', supervised: { hyperparameters: { n_epochs: 2 } } };
  const params = { model: spec.model, training_file: uploaded.id, suffix: 'cm', method, ...spec.create };
  const job = await sdk.fineTuning.jobs.create(params as OpenAI.FineTuning.JobCreateParams);
  expect(job).toMatchObject({ object: 'fine_tuning.job', training_file: uploaded.id, suffix: 'cm', ...(await spec.job()) });

  const listed = (await sdk.fineTuning.jobs.list({ limit: 5 })).data.find((j) => j.id === job.id);
  expect(listed).toBeDefined();
  spec.listed?.(listed!);
  let done = await sdk.fineTuning.jobs.retrieve(job.id);
  const path = [done.status];
  for (let i = 0; i < 10 && done.status !== 'succeeded'; i++) path.push((done = await sdk.fineTuning.jobs.retrieve(job.id)).status);
  if (spec.path) expect(path).toEqual(spec.path);
  expect(done).toMatchObject({ id: job.id, status: 'succeeded', fine_tuned_model: expect.any(String), finished_at: expect.any(Number), ...spec.done?.(job) });

  const events = (await sdk.fineTuning.jobs.listEvents(job.id, { limit: 100 })).data;
  expect(events[0]).toMatchObject({ object: 'fine_tuning.job.event', id: expect.any(String), created_at: expect.any(Number) });
  spec.events?.(events, job, done);
  const checkpoints = (await sdk.fineTuning.jobs.checkpoints.list(job.id)).data;
  expect(checkpoints[0]).toMatchObject({ object: 'fine_tuning.job.checkpoint', fine_tuning_job_id: job.id });
  spec.checkpoints?.(checkpoints, job, done);

  const other = await sdk.fineTuning.jobs.create({ model: spec.model, training_file: uploaded.id, ...spec.other });
  if (spec.cancel) await spec.cancel(sdk, other, done);
  else expect(await sdk.fineTuning.jobs.cancel(other.id)).toMatchObject({ id: other.id, status: 'cancelled' });

  expect(await sdk.files.delete(uploaded.id)).toMatchObject({ id: uploaded.id, deleted: true });
  const exercised = { uploaded, content, job, done, other };
  spec.after?.(exercised);
  return exercised;
}

/** Both the gateway's lists, read without `x-gateway-provider`: client mode stored nothing. */
async function expectNothingStored(gw: TestGateway) {
  expect((await api(gw, 'GET', '/v1/files')).body.data).toEqual([]);
  expect((await api(gw, 'GET', '/v1/fine_tuning/jobs')).body.data).toEqual([]);
}

/** A 400 naming `param` and the provider left untouched. */
async function expectRefused(spec: ClientModeSpec, headers: Headers, param: string, code?: string) {
  const before = spec.seen();
  const res = await api(spec.gw(), 'GET', '/v1/fine_tuning/jobs', { headers });
  expect(res.status).toBe(400);
  expect(res.body.error).toMatchObject({ type: 'invalid_request_error', param, ...(code ? { code } : {}) });
  expect(spec.seen()).toBe(before);
}

/**
 * The shared client-mode tests, inside the caller's `describe`. Returns `exercise` for a provider's
 * own passes (another model, another way of passing credentials), and `errors` for deferred error tests.
 */
export function clientModeContract(spec: ClientModeSpec) {
  it('forwards every files and fine-tuning call with the settings from headers, storing nothing', async () => {
    await exercise(spec, clientSdk(spec.gw(), spec.headers()));
    spec.afterDirect?.();
    await expectNothingStored(spec.gw());
  });

  if (spec.integration) {
    const integration = spec.integration;
    it('works with a stored integration (@slug), ignoring the Authorization header the SDK always sends', async () => {
      const provider = spec.headers()['x-gateway-provider'];
      const created = await api(spec.gw(), 'POST', '/v1/integrations', { body: { slug: `cm-${provider}`, provider, ...integration() } });
      expect(created.status).toBe(200);
      const secrets = spec.secrets?.() ?? Object.values((integration().credentials ?? {}) as Record<string, string>);
      for (const secret of secrets) expect(JSON.stringify(created.body)).not.toContain(secret);
      const headers = { ...spec.slugHeaders?.(), 'x-gateway-provider': `@cm-${provider}`, authorization: 'Bearer not-the-real-key' };
      await exercise(spec, clientSdk(spec.gw(), headers));
      spec.afterSlug?.();
      await expectNothingStored(spec.gw());
    });
  }

  if (spec.hostile.length > 0)
    it.each(spec.hostile)('refuses %s %j with 400 naming it, before any connection', async (header, hostile) => {
      await expectRefused(spec, { ...spec.headers(), [header]: hostile }, header, spec.hostileCode);
    });

  if (spec.required.length > 0)
    it.each(spec.required)('refuses a call without %s with 400 naming it, before any connection', async (header) => {
      const { [header]: _dropped, ...headers } = spec.headers();
      await expectRefused(spec, headers, header, 'missing_setting');
    });

  const wrongKey = spec.wrongKey;
  if (wrongKey) {
    it('relays a wrong credential in the gateway shape without echoing it', async () => {
      const res = await api(spec.gw(), 'GET', '/v1/fine_tuning/jobs', { headers: { ...spec.headers(), [wrongKey.header]: wrongKey.value } });
      expect(res.status).toBe(wrongKey.status);
      expect(res.body.error).toMatchObject({ type: 'provider_error', ...wrongKey.error });
      expect(JSON.stringify(res.body)).not.toContain(wrongKey.value.replace(/^Bearer /, ''));
    });
  }

  if (!spec.errors.deferred) errorsContract(spec, spec.errors);
  return { exercise: (sdk: OpenAI) => exercise(spec, sdk), errors: () => errorsContract(spec, spec.errors) };
}

function errorsContract(spec: ClientModeSpec, errors: ProviderErrors) {
  const list = () => api(spec.gw(), 'GET', '/v1/fine_tuning/jobs', { headers: spec.headers() });
  it(`maps provider errors: 404, 429, 500 → 502 (credential never echoed)${errors.timesOut === false ? '' : ', time-out → 504'}`, async () => {
    const missing = await api(spec.gw(), 'GET', `/v1/fine_tuning/jobs/${encodeURIComponent(errors.unknownJob)}`, { headers: spec.headers() });
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatchObject({ type: 'provider_error', ...(errors.codes?.notFound ? { code: errors.codes.notFound } : {}) });

    errors.fake().failNext('GET', errors.listPath, 429, { times: 3, retryAfter: '0' });
    const limited = await list();
    expect(limited.status).toBe(429);
    expect(limited.body.error).toMatchObject({ type: 'provider_error', ...(errors.codes?.throttled ? { code: errors.codes.throttled } : {}) });

    errors.fake().failNext('GET', errors.listPath, 500, { times: 3, message: `boom ${errors.secret}` });
    const broken = await list();
    expect(broken.status).toBe(502);
    expect(JSON.stringify(broken.body)).not.toContain(errors.secret);

    if (errors.timesOut === false) return;
    // One slow answer: a time-out is not retried, and a delay left over would slow the provider file's next test.
    errors.fake().delayNext('GET', errors.listPath, 3_000, 1);
    expect((await list()).status).toBe(504);
  });
}
