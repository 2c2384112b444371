import { randomInt } from 'node:crypto';
import type { Scope } from '../../auth/scope';
import type { Tx } from '../../db/prisma-errors';
import { badRequest, GatewayError, invalidField, notFound } from '../../errors';
import type { ProviderClient, ProviderRegistry } from '../../providers/registry';
import { checkJobSettingKeys } from '../../providers/settings';
import type { ProviderOperationName, ProviderContent } from '../../providers/types';
import { parseInput, type Input } from '../../validation/parse';
import type { IntegrationSource, ResolvedIntegration } from '../integrations/integration.port';
import type { JobCancellation } from './job-cancellation';
import { isTerminal, type HostedJob, type Hyperparameters, type JobCheckpoint, type JobEvent, type Page } from './fine-tuning.model';
import type { FineTuningRepository } from './fine-tuning.repository';
import {
  createJobSchema,
  listCheckpointsSchema,
  listEventsSchema,
  listJobsSchema,
  requestedJob,
  type CreateJobInput,
  type ListCheckpointsInput,
  type ListEventsInput,
  type ListJobsInput,
} from './fine-tuning.schemas';
import { cancelled } from './fine-tuning.state';

/** What this module needs of the files domain (FileService satisfies it). */
export interface TrainingFileSource {
  find(scope: Scope, id: string): Promise<{ id: string; bytes: number; filename: string; purpose: string } | null>;
  openContent(scope: Scope, id: string): Promise<NodeJS.ReadableStream>;
}

/** The provider operations a hosted job uses; a provider lacking one cannot host jobs. */
const HOSTED_OPERATIONS: readonly ProviderOperationName[] = ['uploadFile', 'createJob', 'getJob'];

const PROVIDER_REF: readonly string[] = ['gatewayOptions', 'x-gateway-provider'];

/** How long the monitor keeps off a job whose cancel an API request is carrying out. */
const CANCEL_HANDOVER_MS = 60_000;

/** Hyperparameters the gateway shows until the provider reports the values it chose. */
const AUTO: Hyperparameters = { nEpochs: 'auto', batchSize: 'auto', learningRateMultiplier: 'auto' };

/**
 * Hosted (provider-mode) fine-tuning jobs. Creating one only records it (`validating_files`); the
 * job monitor uploads the data, submits and follows it. Reads come from the database, never from
 * the provider, so they are fast and work while the provider is down.
 */
export class FineTuningService {
  constructor(
    private readonly jobs: FineTuningRepository,
    private readonly files: TrainingFileSource,
    private readonly integrations: IntegrationSource,
    private readonly providers: ProviderRegistry,
    private readonly cancellation: JobCancellation,
  ) {}

  async create(scope: Scope, input: Input<CreateJobInput>): Promise<HostedJob> {
    const data = parseInput(createJobSchema, input);
    await this.checkFile(scope, data.trainingFile, 'trainingFile');
    if (data.validationFile !== undefined) await this.checkFile(scope, data.validationFile, 'validationFile');
    if (!data.gatewayOptions)
      throw invalidField('gatewayOptions', 'is required for a hosted job: {"x-gateway-provider": "@slug"} names the stored integration to run it with');
    const { 'x-gateway-provider': ref, ...settings } = data.gatewayOptions;
    if (!ref?.startsWith('@')) throw invalidField(PROVIDER_REF, 'must name a stored integration as "@slug" (a hosted job needs stored credentials)');
    const integration = await this.integrations.resolve(scope, ref, PROVIDER_REF);
    checkJobSettingKeys(this.providers.module(integration.provider).settings, settings, ['gatewayOptions']);
    const provider = this.client(integration, settings);
    this.checkHosting(provider);
    const { method, legacy, providerModel, providerOptions } = requestedJob(data);
    const created = await this.jobs.create(
      scope,
      {
        model: data.model,
        providerModel: providerModel ?? null,
        provider: integration.provider,
        integrationSlug: integration.slug,
        trainingFileId: data.trainingFile,
        validationFileId: data.validationFile ?? null,
        suffix: data.suffix ?? null,
        // Like OpenAI, a job always has a seed: the caller's, or one chosen now.
        seed: data.seed ?? randomInt(0, 2_147_483_647),
        // Until the provider reports the values it chose, what the caller left out reads "auto".
        method: {
          type: method?.type ?? 'supervised',
          hyperparameters: { ...AUTO, ...(method?.type === 'dpo' ? { beta: 'auto' } : {}), ...method?.hyperparameters },
        },
        legacyHyperparameters: legacy,
        metadata: data.metadata ?? null,
        gatewayOptions: settings,
        providerOptions: provider.jobOptions(providerOptions),
      },
      {
        level: 'info',
        message: `Created fine-tuning job: to run at ${integration.provider} with integration @${integration.slug}`,
        type: 'message',
        data: { status: 'validating_files' },
      },
    );
    if (created) return created;
    // A file was deleted after the checks above: they now say which.
    await this.checkFile(scope, data.trainingFile, 'trainingFile');
    if (data.validationFile !== undefined) await this.checkFile(scope, data.validationFile, 'validationFile');
    throw new Error('A fine-tuning job was not recorded although its files exist');
  }

  /** What still needs a gateway file's bytes: a hosted job that has not uploaded it to its provider yet (FileService's deletion guard). */
  async fileInUse(tx: Tx, scope: Scope, fileId: string): Promise<string | null> {
    const job = await this.jobs.pendingJobNeeding(tx, scope, fileId);
    if (!job) return null;
    const provider = this.providers.module(job.provider).title;
    return `fine-tuning job '${job.id}' has not uploaded it to ${provider} yet; delete it once the job has (or cancel the job)`;
  }

  async list(scope: Scope, input: Input<ListJobsInput> = {}): Promise<Page<HostedJob>> {
    const { after, limit } = parseInput(listJobsSchema, input);
    const page = await this.jobs.page(scope, { after, take: limit });
    if (!page) throw invalidCursor(after, 'fine-tuning job');
    return { items: page.rows, hasMore: page.hasMore };
  }

  async get(scope: Scope, id: string): Promise<HostedJob> {
    const job = await this.jobs.findById(scope, id);
    if (!job) throw notFound('Fine-tuning job', id);
    return job;
  }

  /**
   * The content of a result file (a provider file id in a hosted job's `result_files`), fetched from
   * the provider with the job's integration; 404 when no job of the scope lists it.
   */
  async resultFileContent(scope: Scope, fileId: string): Promise<ProviderContent> {
    const job = await this.jobs.findByResultFile(scope, fileId);
    if (!job) throw notFound('File', fileId);
    return (await this.connect(scope, job)).fileContent(fileId);
  }

  /** Jobs of the scope with these ids (missing ones left out): GraphQL batches and entities. */
  findMany(scope: Scope, ids: readonly string[]): Promise<HostedJob[]> {
    return this.jobs.findManyByIds(scope, ids);
  }

  /**
   * Cancels the job. Not submitted yet: here, at once (a submission in flight is cancelled at the
   * provider by the monitor as soon as its id is known). Submitted: at the provider, through the
   * same path the monitor uses; the answer is the job as it then stands (`running` while the
   * provider is still stopping it, or when the provider could not be reached: the monitor retries).
   */
  async cancel(scope: Scope, id: string): Promise<HostedJob> {
    const marked = await this.jobs.mutate(scope, id, (job) => {
      if (isTerminal(job.status)) throw notCancellable(job);
      if (!job.providerJobId) return cancelled(job, job.submitAttempts > 0);
      // The monitor leaves the job to this request for a while; it takes over if the provider cannot be reached.
      return { data: { providerCancelPending: true, nextPollAt: new Date(Date.now() + CANCEL_HANDOVER_MS) } };
    });
    if (!marked) throw notFound('Fine-tuning job', id);
    if (!marked.job.providerJobId) return marked.job;
    return this.cancellation.run(scope, marked.job, await this.connect(scope, marked.job), { transient: 'keep-pending' });
  }

  async events(scope: Scope, jobId: string, input: Input<ListEventsInput> = {}): Promise<Page<JobEvent>> {
    const { after, limit } = parseInput(listEventsSchema, input);
    await this.get(scope, jobId);
    const page = await this.jobs.eventsPage(scope, jobId, { after, take: limit });
    if (!page) throw invalidCursor(after, 'event of this job');
    return { items: page.rows, hasMore: page.hasMore };
  }

  async checkpoints(scope: Scope, jobId: string, input: Input<ListCheckpointsInput> = {}): Promise<Page<JobCheckpoint>> {
    const { after, limit } = parseInput(listCheckpointsSchema, input);
    await this.get(scope, jobId);
    const page = await this.jobs.checkpointsPage(scope, jobId, { after, take: limit });
    if (!page) throw invalidCursor(after, 'checkpoint of this job');
    return { items: page.rows, hasMore: page.hasMore };
  }

  /** The newest `perJob` events of each job (GraphQL `events` field, batched by a DataLoader). */
  latestEvents(scope: Scope, jobIds: readonly string[], perJob: number): Promise<JobEvent[]> {
    return this.jobs.latestEvents(scope, jobIds, perJob);
  }

  latestCheckpoints(scope: Scope, jobIds: readonly string[], perJob: number): Promise<JobCheckpoint[]> {
    return this.jobs.latestCheckpoints(scope, jobIds, perJob);
  }

  eventsByIds(scope: Scope, ids: readonly string[]): Promise<JobEvent[]> {
    return this.jobs.eventsByIds(scope, ids);
  }

  checkpointsByIds(scope: Scope, ids: readonly string[]): Promise<JobCheckpoint[]> {
    return this.jobs.checkpointsByIds(scope, ids);
  }

  /** The provider client for a job, with the credentials of its integration and the job's own settings. */
  connect(scope: Scope, job: HostedJob): Promise<ProviderClient> {
    return this.integrations.hostedProvider(scope, job, PROVIDER_REF);
  }

  private client(integration: ResolvedIntegration, gatewayOptions: Record<string, string>): ProviderClient {
    return this.providers.client(integration.provider, { kind: 'integration', ...integration, overrides: { field: 'gatewayOptions', values: gatewayOptions } });
  }

  /** The provider can run hosted jobs, and the settings it needs for them are there and valid. */
  private checkHosting(provider: ProviderClient): void {
    const missing = HOSTED_OPERATIONS.find((op) => !provider.supports(op));
    if (missing) {
      throw new GatewayError('unsupported', `${provider.title} cannot host fine-tuning jobs (it does not support ${missing})`, {
        path: PROVIDER_REF,
        code: 'unsupported_provider',
      });
    }
    for (const op of HOSTED_OPERATIONS) provider.checkSettings(op);
  }

  /** A dataset of this workspace, uploaded for fine-tuning: 404 / 400 naming the field otherwise. */
  private async checkFile(scope: Scope, id: string, field: 'trainingFile' | 'validationFile'): Promise<void> {
    const file = await this.files.find(scope, id);
    if (!file) throw new GatewayError('not_found', `File '${id}' not found`, { path: field, code: 'not_found' });
    if (file.purpose !== 'fine-tune')
      throw invalidField(field, `names a file with purpose '${file.purpose}'; upload the dataset with purpose 'fine-tune'`, 'invalid_file_purpose');
  }
}

const invalidCursor = (after: string | undefined, what: string) => invalidField('after', `no ${what} has the id '${after ?? ''}'`, 'invalid_cursor');

const notCancellable = (job: HostedJob) =>
  badRequest(
    `Fine-tuning job '${job.id}' has already ${job.status === 'cancelled' ? 'been cancelled' : job.status}; it cannot be cancelled`,
    null,
    'job_not_cancellable',
  );
