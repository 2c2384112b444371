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
import { setTimeout } from 'node:timers/promises';
import { TERMINAL_STATUSES } from '../../src/modules/fine-tuning/fine-tuning.model';
import { PROVIDERS } from '../../src/providers/registry';
import type { ProviderName } from '../../src/providers/names';
import { toolRequestCase, type ToolTarget } from '../chat/sdk-suite';

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
  waitForStatus(id: string, statuses: readonly string[]): Promise<Job>;
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
  /** How the refusal without a deployment is worded, where the provider's test says. */
  refusal?: RegExp;
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
  const refused = {
    code: 'deployment_required',
    param: deployment.header,
    ...(deployment.refusal ? { message: expect.stringMatching(deployment.refusal) } : {}),
  };
  expect(await ask()).toMatchObject({ status: 400, body: { error: refused } });
  expect(deployment.calls()).toHaveLength(calls);
  const { value, servedAs = value } = deployment.deploy(model);
  const answered = await ask({ [deployment.header]: value });
  expect(answered).toMatchObject({
    status: 200,
    body: { object: 'chat.completion', model, choices: [{ message: { content: `Answer from ${servedAs}: Hello tuned model` } }] },
  });
  return value;
}

type Row<T> = Array<[what: string, body: Record<string, unknown>, expected: T]>;

/** A provider's side of the hosted-job contract: its fake and integration, and what only it does. */
export interface HostedJobCase<F, R> extends HostedSetup<F> {
  /** What no answer may carry (default: each credential of the first integration). */
  secret?(fake: F): string;
  /** The fake's job the gateway submitted as `remoteId` (what its "Submitted to" event names). */
  remote(fake: F, remoteId: string): R | undefined;
  /** The requests of the fake's job endpoints (default `fake.state.requests`). */
  requests?(fake: F): unknown[];
  /** A fake that moves jobs only when told: one step on, and the statuses the steps lead to from submission. */
  held?: { advance(fake: F, remoteId: string): void; statuses: string[] };
  /** A job created with suffix `hosted-run`, two epochs, metadata and `job`, once succeeded: `done` and `events` among its own, stored `once`. */
  succeeded: {
    job?: Record<string, unknown>;
    done(remote: R): Record<string, unknown>;
    events(remote: R): unknown[];
    once: string | RegExp;
    checkpoints(remote: R, id: string): unknown[];
    /** What only this provider does: the request members it received, the dataset as it stored it. */
    check(remote: R, done: Job): void | Promise<void>;
  };
  /** Creates refused with a 400 besides each credential header in gateway_options and `refusedOption` (default `{ role_arn }`). */
  refused?: Row<ExpectedError>;
  refusedOption?: Record<string, unknown>;
  /** Jobs failed at submission (the adapter or the provider refuses them) with `error`, then `check`ed on the fake. */
  failures?: Array<[what: string, job: Record<string, unknown>, error: Record<string, unknown>, check?: (fake: F, id: string) => void]>;
  /** A submitted job the provider fails: it reads failed with `error`. */
  failed?: { job?: Record<string, unknown>; fail(fake: F, remoteId: string): void; error: Record<string, unknown> };
  /** `hold` keeps the job where it is (returns its undo); the cancel comes once submitted (or `when` the job has that status). */
  cancel?: {
    job?: Record<string, unknown>;
    hold?(fake: F): (() => void) | void;
    when?: string;
    answers?: string[];
    asked?(remote: R, fake: F): void;
    stopped?(remote: R, events: OpenAI.FineTuning.FineTuningJobEvent[], fake: F): void;
  };
  /** Where the tuned model answers only on a deployment: its last chat call then carried `sent`. */
  deployment?: DeploymentOf & { sent(value: string, model: string): Record<string, unknown> };
  /** Tools and a json_schema on the tuned model (on its deployment, where it has one) and on `@slug/<atSlug>`. */
  tools?: Omit<ToolTarget, 'model' | 'client'> & { atSlug: string };
}

/**
 * The life cycle every hosted job goes through on a provider's fake, through the OpenAI SDK: created,
 * uploaded, submitted and followed to succeeded with the provider's model, events stored once and
 * checkpoints; refusals at creation (each credential header in gateway_options, an option the provider
 * does not take: a 400 naming it and the provider); failures with their reason; cancel, after which the
 * job is no longer polled; another organisation's 404; the credential in no answer; chat on the tuned
 * model's deployment; tools on the tuned model and on `@slug/<model>`. Returns the set-up, with the
 * succeeded job for the provider's own tests.
 */
export function hostedJobContract<F extends { close(): Promise<void> }, R>(name: ProviderName, c: HostedJobCase<F, R>) {
  const hosted: HostedOnFake<F> & { succeeded?: Job } = hostedOnFake(c);
  const { createJob, waitForStatus } = hosted;
  const module = PROVIDERS.find((p) => p.name === name)!;
  const remoteOf = async (id: string) => {
    const prefix = `Submitted to ${name} as `;
    const remoteId = (await eventually(async () => (await hosted.messagesOf(id)).find((m) => m.startsWith(prefix)), 60_000)).slice(prefix.length);
    return { remoteId, remote: c.remote(hosted.fake, remoteId)! };
  };
  const epochs = { type: 'supervised', supervised: { hyperparameters: { n_epochs: 2 } } };

  describe(`hosted ${name} jobs (contract)`, () => {
    it('creates a job that the monitor uploads, submits and follows to succeeded with the provider’s model, its events once and checkpoints', async () => {
      const created = await createJob({ suffix: 'hosted-run', method: epochs, metadata: { team: 'search' }, ...c.succeeded.job });
      expect(created).toMatchObject({ status: 'validating_files', model: c.model, training_file: hosted.trainingFileId, metadata: { team: 'search' } });
      const { remoteId, remote } = await remoteOf(created.id);
      for (const status of c.held?.statuses ?? []) {
        c.held!.advance(hosted.fake, remoteId);
        await waitForStatus(created.id, [status]);
      }
      const done = await waitForStatus(created.id, TERMINAL_STATUSES);
      const ended = { status: 'succeeded', finished_at: expect.any(Number), training_file: hosted.trainingFileId, hyperparameters: { n_epochs: 2 } };
      expect(done).toMatchObject({ ...ended, ...c.succeeded.done(remote) });
      const messages = await hosted.messagesOf(created.id);
      expect(messages[0]).toBe('Job status changed from running to succeeded');
      const path = ['validating_files', ...(c.held?.statuses ?? [])].map((from, i, all) => `Job status changed from ${from} to ${all[i + 1]}`);
      if (c.held) expect(messages.filter((m) => m.startsWith('Job status changed')).reverse()).toEqual(path.slice(0, -1));
      const uploaded = expect.stringMatching(new RegExp(`^Uploaded training file to ${name} as `));
      expect(messages).toEqual(expect.arrayContaining([uploaded, ...c.succeeded.events(remote)]));
      const once = c.succeeded.once;
      expect(messages.filter((m) => (typeof once === 'string' ? m === once : once.test(m)))).toHaveLength(1);
      expect((await hosted.client.fineTuning.jobs.checkpoints.list(created.id)).data).toEqual(c.succeeded.checkpoints(remote, created.id));
      await c.succeeded.check(remote, done);
      hosted.succeeded = done;
    });

    const credentials = Object.values(module.settings).filter((s) => s.secret);
    const refused: Row<ExpectedError> = [
      ...credentials.map((s): Row<ExpectedError>[number] => [
        `the credential ${s.header} in gateway_options`,
        { gateway_options: { [s.header]: 'x' } },
        { message: /is a credential/ },
      ]),
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
      if (error.code === 'unsupported_parameter') expect(res.body.error.message).toContain(module.title);
    });

    if (c.failures)
      it.each(c.failures)('fails a job %s at submission, with the reason', async (...[, job, error, check]) => {
        const created = await createJob(job);
        expect(await waitForStatus(created.id, TERMINAL_STATUSES)).toMatchObject({ status: 'failed', error, finished_at: expect.any(Number) });
        expect((await hosted.messagesOf(created.id)).filter((m) => m.startsWith('Submitted to'))).toEqual([]);
        check?.(hosted.fake, created.id);
      });

    const { failed, cancel, tools } = c;
    if (failed)
      it('records a job the provider failed, with the provider’s reason', async () => {
        const created = await createJob(failed.job);
        const { remoteId } = await remoteOf(created.id);
        failed.fail(hosted.fake, remoteId);
        c.held?.advance(hosted.fake, remoteId);
        expect(await waitForStatus(created.id, TERMINAL_STATUSES)).toMatchObject({ status: 'failed', error: failed.error });
      });

    if (cancel)
      it('cancels: the provider is told where it can be, the job ends cancelled and is no longer polled', async () => {
        const release = cancel.hold?.(hosted.fake);
        try {
          const created = await createJob(cancel.job);
          const { remoteId, remote } = await remoteOf(created.id);
          if (cancel.when) await waitForStatus(created.id, [cancel.when]);
          const answer = await hosted.client.fineTuning.jobs.cancel(created.id);
          expect(answer.id).toBe(created.id);
          expect(cancel.answers ?? ['running', 'cancelled']).toContain(answer.status);
          if (answer.status === 'cancelled') expect(answer.finished_at).toEqual(expect.any(Number));
          cancel.asked?.(remote, hosted.fake);
          c.held?.advance(hosted.fake, remoteId);
          expect(await waitForStatus(created.id, TERMINAL_STATUSES)).toMatchObject({ status: 'cancelled', error: null, finished_at: expect.any(Number) });
          cancel.stopped?.(remote, (await hosted.client.fineTuning.jobs.listEvents(created.id, { limit: 100 })).data, hosted.fake);
          // A poll in flight when the cancel landed may still finish: it holds the job's lease until then. Then none follows.
          const prisma = hosted.gw.gateway.services.db.prisma;
          await eventually(async () => (await prisma.fineTuningJob.findUniqueOrThrow({ where: { id: created.id } })).leaseOwner === null, 10_000);
          const requests = () => c.requests?.(hosted.fake) ?? (hosted.fake as unknown as { state: { requests: unknown[] } }).state.requests;
          const before = requests().length;
          await setTimeout(1500);
          expect(requests()).toHaveLength(before);
          expect((await hosted.client.fineTuning.jobs.retrieve(created.id)).status).toBe('cancelled');
        } finally {
          release?.();
        }
      });

    it('answers 404 for the job to another organisation, on every route, and lists none of its jobs', async () => {
      const other = await createOrganisation(hosted.gw);
      for (const path of ['', '/cancel', '/events', '/checkpoints']) {
        const res = await api(other, path === '/cancel' ? 'POST' : 'GET', `/v1/fine_tuning/jobs/${hosted.succeeded!.id}${path}`);
        expectError(res, 404, { code: 'not_found' });
      }
      expect((await api(other, 'GET', '/v1/fine_tuning/jobs')).body).toEqual({ object: 'list', data: [], has_more: false });
    });

    it('never puts the integration’s secret in an answer', () => {
      expect(hosted.answers.length).toBeGreaterThan(10);
      const secrets = c.secret ? [c.secret(hosted.fake)] : Object.values(c.integrations(hosted.fake)[0].credentials as Record<string, string>);
      for (const secret of secrets) for (const answer of hosted.answers) expect(answer).not.toContain(secret);
    });

    let deployed: string | undefined;
    const { deployment } = c;
    if (deployment)
      it('serves the tuned model through chat completions once deployed, a hostile deployment refused before any call', async () => {
        const model = hosted.succeeded!.fine_tuned_model!;
        deployed = await chatOnDeployment(hosted.gw, model, deployment);
        expect(deployment.calls().at(-1)).toMatchObject(deployment.sent(deployed, model));
        const calls = deployment.calls().length;
        const body = { model, messages: [{ role: 'user', content: 'x' }] };
        expectError(await api(hosted.gw, 'POST', '/v1/chat/completions', { headers: { [deployment.header]: '../../evil' }, body }), 400, {
          param: deployment.header,
        });
        expect(deployment.calls()).toHaveLength(calls);
      });

    if (tools) {
      const tuned = () => (deployed ? gatewaySdk(hosted.gw, { headers: { [deployment!.header]: deployed } }) : hosted.client);
      toolRequestCase(`${module.title} fine-tuned model`, () => ({ ...tools, model: hosted.succeeded!.fine_tuned_model!, client: tuned }));
      toolRequestCase(`${module.title} @slug/model`, () => ({
        ...tools,
        model: `@${c.integrations(hosted.fake)[0].slug}/${tools.atSlug}`,
        client: () => hosted.client,
      }));
    }
  });
  return hosted;
}
