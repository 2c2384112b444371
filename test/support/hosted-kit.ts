/**
 * The set-up every hosted (provider-mode) job test on a fake provider shares: the fake and a gateway
 * pointed at it with a fast job monitor, the provider's integrations stored, one training file
 * uploaded, and the OpenAI SDK to create jobs on the first integration and wait for their statuses.
 */
import type OpenAI from 'openai';
import { toFile } from 'openai';
import { gatewaySdk } from './answers';
import { eventually } from './expect';
import { api, startTestGateway, type TestGateway } from './gateway';

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
  };

  beforeAll(async () => {
    hosted.fake = await options.start();
    hosted.gw = await startTestGateway({ ...options.env(hosted.fake), GATEWAY_JOB_POLL_MS: '50', GATEWAY_PROVIDER_TIMEOUT_MS: '5000' });
    hosted.client = gatewaySdk(hosted.gw);
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
