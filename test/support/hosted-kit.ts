/**
 * The set-up every hosted (provider-mode) job test on a fake provider shares: the fake and a gateway
 * pointed at it with a fast job monitor, the provider's integrations stored, one training file
 * uploaded, and the OpenAI SDK to create jobs on the first integration and wait for their statuses.
 */
import type OpenAI from 'openai';
import { toFile } from 'openai';
import { gatewaySdk } from './answers';
import { eventually, expectError, type ExpectedError } from './expect';
import { api, createOrganisation, startTestGateway, type TestGateway } from './gateway';

type Job = OpenAI.FineTuning.FineTuningJob;

export interface HostedOnFake<F> {
  /** Set before the first test. */
  fake: F;
  gw: TestGateway;
  client: OpenAI;
  trainingFileId: string;
  /** A hosted job on the first integration, with the set-up's model and training file. */
  createJob(extra?: Record<string, unknown>): Promise<Job>;
  /** The job once its status is one of `statuses`. */
  waitForStatus(id: string, statuses: string[]): Promise<Job>;
  /** The messages of the job's stored events, newest first. */
  messagesOf(id: string): Promise<string[]>;
  /** Every answer's text the client received. */
  answers: string[];
}

/** A fake provider, the gateway's endpoints for it, its integrations, and what its hosted jobs train. */
export interface HostedSetup<F> {
  start(): Promise<F>;
  /** The gateway's environment besides the monitor's poll period: the provider's endpoints. */
  env(fake: F): Record<string, string>;
  /** Integration bodies to store (slug, provider, credentials, options); jobs use the first. */
  integrations(fake: F): Array<{ slug: string } & Record<string, unknown>>;
  model: string;
  dataset: string;
  /** Fields every job create sends besides model, training file and gateway options. */
  job?: Record<string, unknown>;
}

export function hostedOnFake<F extends { close(): Promise<void> }>(options: HostedSetup<F>): HostedOnFake<F> {
  let slug = '';
  const hosted: HostedOnFake<F> = {
    ...({} as Pick<HostedOnFake<F>, 'fake' | 'gw' | 'client' | 'trainingFileId'>),
    createJob: (extra = {}) =>
      hosted.client.fineTuning.jobs.create({
        model: options.model,
        training_file: hosted.trainingFileId,
        gateway_options: { 'x-gateway-provider': `@${slug}` },
        ...options.job,
        ...extra,
      } as OpenAI.FineTuning.JobCreateParams),
    waitForStatus: (id, statuses) =>
      eventually(async () => {
        const job = await hosted.client.fineTuning.jobs.retrieve(id);
        return statuses.includes(job.status) ? job : undefined;
      }, 60_000),
    messagesOf: async (id) => (await hosted.client.fineTuning.jobs.listEvents(id, { limit: 100 })).data.map((e) => e.message),
    answers: [],
  };

  beforeAll(async () => {
    hosted.fake = await options.start();
    hosted.gw = await startTestGateway({ ...options.env(hosted.fake), GATEWAY_JOB_POLL_MS: '50', GATEWAY_PROVIDER_TIMEOUT_MS: '5000' });
    hosted.client = gatewaySdk(hosted.gw, { onAnswer: (text) => void hosted.answers.push(text) });
    const integrations = options.integrations(hosted.fake);
    slug = integrations[0].slug;
    for (const body of integrations) {
      const res = await api(hosted.gw, 'POST', '/v1/integrations', { body });
      if (res.status !== 200) throw new Error(`integration not created: ${res.status} ${JSON.stringify(res.body)}`);
    }
    const file = await toFile(Buffer.from(options.dataset), 'train.jsonl');
    hosted.trainingFileId = (await hosted.client.files.create({ file, purpose: 'fine-tune' })).id;
  });

  afterAll(async () => {
    await hosted.gw?.stop();
    await hosted.fake?.close();
  });

  return hosted;
}

/** Where a tuned model answers only on a deployment: the header naming it, the provider's chat calls, and how to deploy one. */
export interface DeploymentOf {
  header: string;
  calls(): unknown[];
  /** Deploys `model`: the header's value, and the model name the fake then answers as (the value, unless said). */
  deploy(model: string): { value: string; servedAs?: string };
}

/**
 * Chat with a tuned model that needs a deployment: refused (400 `deployment_required`, naming the
 * header) before any provider call, then answered through the deployment named in the header.
 * Returns the header's value.
 */
export async function chatOnDeployment(gw: TestGateway, model: string, deployment: DeploymentOf): Promise<string> {
  const ask = (headers: Record<string, string> = {}) =>
    api(gw, 'POST', '/v1/chat/completions', { headers, body: { model, messages: [{ role: 'user', content: 'Hello tuned model' }] } });
  const calls = deployment.calls().length;
  expect(await ask()).toMatchObject({ status: 400, body: { error: { code: 'deployment_required', param: deployment.header } } });
  expect(deployment.calls()).toHaveLength(calls);
  const { value, servedAs = value } = deployment.deploy(model);
  const answered = await ask({ [deployment.header]: value });
  expect(answered).toMatchObject({
    status: 200,
    body: { object: 'chat.completion', model, choices: [{ message: { content: `Answer from ${servedAs}: Hello tuned model` } }] },
  });
  return value;
}

/** A provider's side of the hosted-job contract: its fake and integration, and what only it does. */
export interface HostedJobCase<F, R> extends HostedSetup<F> {
  /** The provider's title, as a refused option names it. */
  title: string;
  /** The integration's secret, which no answer may carry, and the header it is refused under in gateway_options. */
  secret(fake: F): string;
  credentialHeader?: string;
  /** The fake's job the gateway submitted as `remoteId` (the id its "Submitted to" event names). */
  remote(fake: F, remoteId: string): R | undefined;
  /** The requests the fake's job endpoints received (default `fake.state.requests`). */
  requests?(fake: F): unknown[];
  /** Where the fake moves jobs only when told: one step on (each to the next status of `statuses`, from submission to succeeded). */
  held?: { advance(fake: F, remoteId: string): void; statuses: string[] };
  succeeded: {
    /** Create fields besides the kit's suffix (`hosted-run`), two epochs and metadata. */
    job?: Record<string, unknown>;
    /** What the job reads once succeeded besides status, times and training file: its fine_tuned_model, as the provider named it. */
    done(remote: R): Record<string, unknown>;
    /** Events besides the upload and the submission, and one synthesised from the provider's status, stored once however often polled. */
    events(remote: R): unknown[];
    once: string | RegExp;
    checkpoints(remote: R, id: string): unknown[];
    /** What only this provider does: the request members it received, the dataset as it stored it. */
    check(remote: R, done: Job): void | Promise<void>;
  };
  /** Creates refused with a 400 besides a credential in gateway_options and `refusedOption` (default: Bedrock's `role_arn`). */
  refused?: Array<[what: string, body: Record<string, unknown>, error: ExpectedError]>;
  refusedOption?: Record<string, unknown>;
  /** Jobs that fail at submission (the adapter or the provider refuses them), with their error (and what the fake then holds). */
  failures?: Array<[what: string, job: Record<string, unknown>, error: Record<string, unknown>, check?: (fake: F, id: string) => void]>;
  /** Fails a submitted job at the provider: it then reads failed with `error`. */
  failed?: { job?: Record<string, unknown>; fail(fake: F, remoteId: string): void; error: Record<string, unknown> };
  cancel?: {
    job?: Record<string, unknown>;
    /** Injected slowness or failures that keep the job where it is until cancelled (undone after the test). */
    hold?(fake: F): (() => void) | void;
    /** The status to wait for before cancelling (default: submitted). */
    when?: string;
    /** What the cancel may answer (default running or cancelled: stopping takes the provider a while). */
    answers?: string[];
    /** After the cancel's answer, before the job reads cancelled: what the provider was asked. */
    asked?(remote: R, fake: F): void;
    /** Once cancelled: what the provider did, and the events said. */
    stopped?(remote: R, events: OpenAI.FineTuning.FineTuningJobEvent[], fake: F): void;
  };
}

/**
 * The life cycle every hosted job goes through on a provider's fake, through the OpenAI SDK: created,
 * uploaded, submitted and followed to succeeded with the provider's model, events stored once and
 * checkpoints; refusals at creation (a credential in gateway_options, an option of another provider:
 * a 400 naming it and the provider); failures with their reason; cancel, after which the job is no
 * longer polled; another organisation's 404; and the credential in no answer. Returns the set-up,
 * with the succeeded job for the provider's own tests (chat on the tuned model).
 */
export function hostedJobContract<F extends { close(): Promise<void> }, R>(provider: string, c: HostedJobCase<F, R>) {
  const hosted: HostedOnFake<F> & { succeeded?: Job } = hostedOnFake(c);
  const { createJob, waitForStatus } = hosted;
  const ENDED = ['succeeded', 'failed', 'cancelled'];
  const submittedAs = async (id: string) => {
    const prefix = `Submitted to ${provider} as `;
    const message = await eventually(async () => (await hosted.messagesOf(id)).find((m) => m.startsWith(prefix)), 60_000);
    return message.slice(prefix.length);
  };
  const remoteOf = async (id: string) => {
    const remoteId = await submittedAs(id);
    return { remoteId, remote: c.remote(hosted.fake, remoteId)! };
  };
  const twoEpochs = { type: 'supervised', supervised: { hyperparameters: { n_epochs: 2 } } };

  describe(`hosted ${provider} jobs (contract)`, () => {
    it('creates a job that the monitor uploads, submits and follows to succeeded with the provider’s model, its events once and checkpoints', async () => {
      const created = await createJob({ suffix: 'hosted-run', method: twoEpochs, metadata: { team: 'search' }, ...c.succeeded.job });
      expect(created).toMatchObject({ status: 'validating_files', model: c.model, training_file: hosted.trainingFileId, metadata: { team: 'search' } });
      const { remoteId, remote } = await remoteOf(created.id);
      for (const status of c.held?.statuses ?? []) {
        c.held!.advance(hosted.fake, remoteId);
        await waitForStatus(created.id, [status]);
      }
      const done = await waitForStatus(created.id, ENDED);
      expect(done).toMatchObject({
        status: 'succeeded',
        finished_at: expect.any(Number),
        training_file: hosted.trainingFileId,
        hyperparameters: { n_epochs: 2 },
        ...c.succeeded.done(remote),
      });
      const messages = await hosted.messagesOf(created.id);
      expect(messages[0]).toBe('Job status changed from running to succeeded');
      if (c.held) {
        const path = ['validating_files', ...c.held.statuses]
          .slice(1)
          .map((to, i, all) => `Job status changed from ${i ? all[i - 1] : 'validating_files'} to ${to}`);
        expect(messages.filter((m) => m.startsWith('Job status changed')).reverse()).toEqual(path);
      }
      expect(messages).toEqual(
        expect.arrayContaining([expect.stringMatching(new RegExp(`^Uploaded training file to ${provider} as `)), ...c.succeeded.events(remote)]),
      );
      const once = c.succeeded.once;
      expect(messages.filter((m) => (typeof once === 'string' ? m === once : once.test(m)))).toHaveLength(1);
      expect((await hosted.client.fineTuning.jobs.checkpoints.list(created.id)).data).toEqual(c.succeeded.checkpoints(remote, created.id));
      await c.succeeded.check(remote, done);
      hosted.succeeded = done;
    });

    const refused: Array<[string, Record<string, unknown>, ExpectedError]> = [
      ['a credential in gateway_options', { gateway_options: { [c.credentialHeader ?? 'authorization']: 'x' } }, { message: /is a credential/ }],
      ['an option it does not take', { provider_options: c.refusedOption ?? { role_arn: 'arn:aws:iam::1:role/x' } }, { code: 'unsupported_parameter' }],
      ...(c.refused ?? []),
    ];
    it.each(refused)('refuses %s at creation, with a 400 naming it', async (_what, body, error) => {
      const gateway_options = { 'x-gateway-provider': `@${c.integrations(hosted.fake)[0].slug}`, ...(body.gateway_options as object) };
      const res = await api(hosted.gw, 'POST', '/v1/fine_tuning/jobs', {
        body: { model: c.model, training_file: hosted.trainingFileId, ...body, gateway_options },
      });
      hosted.answers.push(JSON.stringify(res.body));
      const [field, values] = Object.entries(body).find(([key]) => key.endsWith('_options'))!;
      const named = Object.keys(values as object).find((key) => key !== 'x-gateway-provider') ?? '';
      expectError(res, 400, { param: `${field}.${named}`, ...error });
      if (error.code === 'unsupported_parameter') expect(res.body.error.message).toContain(c.title);
    });

    if (c.failures?.length)
      it.each(c.failures)('fails a job %s at submission, with the reason', async (...[, job, error, check]) => {
        const created = await createJob(job);
        expect(await waitForStatus(created.id, ENDED)).toMatchObject({ status: 'failed', error, finished_at: expect.any(Number) });
        expect((await hosted.messagesOf(created.id)).filter((m) => m.startsWith('Submitted to'))).toEqual([]);
        check?.(hosted.fake, created.id);
      });

    const failed = c.failed;
    if (failed)
      it('records a job the provider failed, with the provider’s reason', async () => {
        const created = await createJob(failed.job);
        const { remoteId } = await remoteOf(created.id);
        failed.fail(hosted.fake, remoteId);
        c.held?.advance(hosted.fake, remoteId);
        expect(await waitForStatus(created.id, ENDED)).toMatchObject({ status: 'failed', error: failed.error });
      });

    const cancel = c.cancel;
    if (cancel)
      it('cancels: the provider is told where it can be, the job ends cancelled and is no longer polled', async () => {
        const release = cancel.hold?.(hosted.fake);
        try {
          const created = await createJob(cancel.job);
          const { remoteId, remote } = await remoteOf(created.id);
          if (cancel.when) await waitForStatus(created.id, [cancel.when]);
          const answer = await hosted.client.fineTuning.jobs.cancel(created.id);
          expect(cancel.answers ?? ['running', 'cancelled']).toContain(answer.status);
          cancel.asked?.(remote, hosted.fake);
          c.held?.advance(hosted.fake, remoteId);
          expect(await waitForStatus(created.id, ENDED)).toMatchObject({ status: 'cancelled', error: null, finished_at: expect.any(Number) });
          cancel.stopped?.(remote, (await hosted.client.fineTuning.jobs.listEvents(created.id, { limit: 100 })).data, hosted.fake);
          // A poll in flight when the cancel landed may still finish: it holds the job's lease until then. Then none follows.
          const prisma = hosted.gw.gateway.services.db.prisma;
          await eventually(async () => (await prisma.fineTuningJob.findUniqueOrThrow({ where: { id: created.id } })).leaseOwner === null, 10_000);
          const requests = () => c.requests?.(hosted.fake) ?? (hosted.fake as unknown as { state: { requests: unknown[] } }).state.requests;
          const before = requests().length;
          await new Promise((resolve) => setTimeout(resolve, 1500));
          expect(requests()).toHaveLength(before);
          expect((await hosted.client.fineTuning.jobs.retrieve(created.id)).status).toBe('cancelled');
        } finally {
          release?.();
        }
      });

    it('answers 404 for the job to another organisation, on every route, and lists none of its jobs', async () => {
      const id = hosted.succeeded?.id;
      expect(id).toBeDefined();
      const other = await createOrganisation(hosted.gw);
      for (const [method, path] of [
        ['GET', ''],
        ['POST', '/cancel'],
        ['GET', '/events'],
        ['GET', '/checkpoints'],
      ]) {
        expectError(await api(other, method, `/v1/fine_tuning/jobs/${id}${path}`), 404, { code: 'not_found' });
      }
      expect((await api(other, 'GET', '/v1/fine_tuning/jobs')).body).toEqual({ object: 'list', data: [], has_more: false });
    });

    it('never puts the integration’s secret in an answer', () => {
      expect(hosted.answers.length).toBeGreaterThan(10);
      const secret = c.secret(hosted.fake);
      for (const answer of hosted.answers) expect(answer).not.toContain(secret);
    });
  });
  return hosted;
}
