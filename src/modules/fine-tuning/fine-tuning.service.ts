import type { Scope } from '../../auth/scope';
import { badRequest, GatewayError, notFound } from '../../errors';
import type { FineTuningJob, FineTuningJobCheckpoint, FineTuningJobEvent, Prisma } from '../../generated/prisma/client';
import { isProviderName, type ProviderRegistry } from '../../providers/registry';
import { requireOperation, type FineTuningProvider, type ProviderContext, type ProviderName } from '../../providers/types';
import { parseInput, type Unvalidated } from '../../validation/parse';
import type { FineTuningRepository } from './fine-tuning.repository';
import {
  createJobSchema,
  listCheckpointsSchema,
  listEventsSchema,
  listJobsSchema,
  type CreateJobData,
  type CreateJobInput,
  type ListCheckpointsInput,
  type ListEventsInput,
  type ListJobsInput,
} from './fine-tuning.schemas';
import { cancelled, isTerminal, transition } from './fine-tuning.state';

/** What this module needs of the files domain (FileService satisfies it). */
export interface TrainingFileSource {
  get(scope: Scope, id: string): Promise<{ id: string; bytes: number | bigint; filename: string; purpose: string }>;
  openContent(scope: Scope, id: string): Promise<NodeJS.ReadableStream>;
}

/** What this module needs of the integrations domain (IntegrationService satisfies it). */
export interface IntegrationSource {
  resolve(
    scope: Scope,
    ref: string,
  ): Promise<{ provider: ProviderName; credentials: Record<string, string>; options: Record<string, string>; slug: string }>;
}

export interface Page<T> {
  items: T[];
  hasMore: boolean;
}

/** The provider operations a hosted job uses; a provider lacking one cannot host jobs. */
const HOSTED_OPERATIONS = ['uploadFile', 'createJob', 'getJob', 'cancelJob'] as const;

/** Hyperparameters the gateway shows until the provider reports the values it chose. */
const AUTO_HYPERPARAMETERS = { n_epochs: 'auto', batch_size: 'auto', learning_rate_multiplier: 'auto' } as const;

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
  ) {}

  async create(scope: Scope, input: Unvalidated<CreateJobInput>): Promise<FineTuningJob> {
    const data = parseInput(createJobSchema, input);
    await this.checkFile(scope, data.trainingFile, 'trainingFile');
    if (data.validationFile !== undefined) await this.checkFile(scope, data.validationFile, 'validationFile');
    const { 'x-gateway-provider': ref, ...settings } = data.gatewayOptions as Record<string, string>;
    const integration = await this.integrations.resolve(scope, ref).catch((err: unknown) => {
      throw err instanceof GatewayError ? err.withParam('gatewayOptions.x-gateway-provider') : err;
    });
    this.checkProvider(integration.provider);

    const { method, legacy } = requestedMethod(data);
    const type = method?.type === 'dpo' ? 'dpo' : 'supervised';
    const given = (method?.[type] as { hyperparameters?: Record<string, unknown> } | undefined)?.hyperparameters ?? {};
    const hyperparameters = { ...AUTO_HYPERPARAMETERS, ...(type === 'dpo' ? { beta: 'auto' } : {}), ...given };
    const { model: providerModel, ...providerOptions } = {
      ...compact({ role_arn: data.roleArn, job_name: data.jobName, output_file: data.outputFile }),
      ...data.providerOptions,
    };
    return this.jobs.create(
      scope,
      {
        model: data.model,
        providerModel: providerModel ?? null,
        provider: integration.provider,
        integrationSlug: integration.slug,
        trainingFileId: data.trainingFile,
        validationFileId: data.validationFile ?? null,
        suffix: data.suffix ?? null,
        seed: data.seed ?? null,
        method: (method ?? null) as Prisma.InputJsonValue | null,
        hyperparameters: hyperparameters as Prisma.InputJsonValue,
        legacyHyperparameters: legacy,
        metadata: data.metadata ?? null,
        gatewayOptions: settings,
        providerOptions,
      },
      {
        level: 'info',
        message: `Created fine-tuning job: to run at ${integration.provider} with integration @${integration.slug}`,
        type: 'message',
        data: { status: 'validating_files' },
      },
    );
  }

  async list(scope: Scope, input: Unvalidated<ListJobsInput> = {}): Promise<Page<FineTuningJob>> {
    const { after, limit } = parseInput(listJobsSchema, input);
    const page = await this.jobs.page(scope, { after, take: limit });
    if (!page) throw invalidCursor(after!, 'fine-tuning job');
    return { items: page.rows, hasMore: page.hasMore };
  }

  async get(scope: Scope, id: string): Promise<FineTuningJob> {
    const job = await this.jobs.findById(scope, id);
    if (!job) throw notFound('Fine-tuning job', id);
    return job;
  }

  /** Jobs of the scope with these ids (missing ones left out): GraphQL batches and entities. */
  findMany(scope: Scope, ids: readonly string[]): Promise<FineTuningJob[]> {
    return this.jobs.findManyByIds(scope, ids);
  }

  /**
   * Cancels the job: at the provider when it was submitted (then here), otherwise here at once. A job
   * whose submission may be in flight is also marked for the monitor, which cancels the provider job
   * as soon as its id is known. A finished job cannot be cancelled (400).
   */
  async cancel(scope: Scope, id: string): Promise<FineTuningJob> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const job = await this.get(scope, id);
      if (isTerminal(job.status)) throw notCancellable(job);
      if (job.providerJobId) {
        const { adapter, ctx } = await this.connect(scope, job);
        const remote = await requireOperation(adapter, 'cancelJob')(ctx, job.providerJobId);
        const finishedAt = remote.finishedAt ? new Date(remote.finishedAt * 1000) : new Date();
        const result = await this.jobs.mutate(scope, id, (current) => transition(current, 'cancelled', { finishedAt, providerCancelPending: false }));
        if (!result) throw notFound('Fine-tuning job', id);
        return result.job;
      }
      const result = await this.jobs.mutate(scope, id, (current) => (current.providerJobId ? null : cancelled(current, true)));
      if (!result) throw notFound('Fine-tuning job', id);
      if (result.changed) return result.job;
      // Submitted (or finished) between the read and the lock: take the path for that state.
    }
    throw new GatewayError('conflict', `Fine-tuning job '${id}' changed while it was being cancelled; try again`, { code: 'job_busy' });
  }

  async events(scope: Scope, jobId: string, input: Unvalidated<ListEventsInput> = {}): Promise<Page<FineTuningJobEvent>> {
    const { after, limit } = parseInput(listEventsSchema, input);
    await this.get(scope, jobId);
    const page = await this.jobs.eventsPage(scope, jobId, { after, take: limit });
    if (!page) throw invalidCursor(after!, 'event of this job');
    return { items: page.rows, hasMore: page.hasMore };
  }

  async checkpoints(scope: Scope, jobId: string, input: Unvalidated<ListCheckpointsInput> = {}): Promise<Page<FineTuningJobCheckpoint>> {
    const { after, limit } = parseInput(listCheckpointsSchema, input);
    await this.get(scope, jobId);
    const page = await this.jobs.checkpointsPage(scope, jobId, { after, take: limit });
    if (!page) throw invalidCursor(after!, 'checkpoint of this job');
    return { items: page.rows, hasMore: page.hasMore };
  }

  /** The newest `perJob` events of each job (GraphQL `events` field, batched by a DataLoader). */
  latestEvents(scope: Scope, jobIds: readonly string[], perJob: number): Promise<FineTuningJobEvent[]> {
    return this.jobs.latestEvents(scope, jobIds, perJob);
  }

  latestCheckpoints(scope: Scope, jobIds: readonly string[], perJob: number): Promise<FineTuningJobCheckpoint[]> {
    return this.jobs.latestCheckpoints(scope, jobIds, perJob);
  }

  eventsByIds(scope: Scope, ids: readonly string[]): Promise<FineTuningJobEvent[]> {
    return this.jobs.eventsByIds(scope, ids);
  }

  checkpointsByIds(scope: Scope, ids: readonly string[]): Promise<FineTuningJobCheckpoint[]> {
    return this.jobs.checkpointsByIds(scope, ids);
  }

  /** The provider adapter and call context for a job, with the credentials of its integration. */
  async connect(scope: Scope, job: FineTuningJob): Promise<{ adapter: FineTuningProvider; ctx: ProviderContext }> {
    const integration = await this.integrations.resolve(scope, `@${job.integrationSlug}`);
    if (integration.provider !== job.provider) {
      throw badRequest(`Integration @${job.integrationSlug} is now for ${integration.provider}, not ${job.provider}`, 'gatewayOptions.x-gateway-provider', 'integration_changed');
    }
    const options = { ...integration.options, ...(job.gatewayOptions as Record<string, string>) };
    return this.providers.connect(job.provider as ProviderName, { credentials: integration.credentials, options });
  }

  /** A dataset of this workspace, uploaded for fine-tuning: 404 / 400 naming the field otherwise. */
  private async checkFile(scope: Scope, id: string, field: 'trainingFile' | 'validationFile'): Promise<void> {
    const file = await this.files.get(scope, id).catch((err: unknown) => {
      throw err instanceof GatewayError ? err.withParam(field) : err;
    });
    if (file.purpose !== 'fine-tune') {
      const name = field === 'trainingFile' ? 'training_file' : 'validation_file';
      throw badRequest(`${name} '${id}' has purpose '${file.purpose}'; upload the dataset with purpose 'fine-tune'`, field, 'invalid_file_purpose');
    }
  }

  private checkProvider(provider: string): void {
    if (!isProviderName(provider) || !this.providers.supports(provider)) {
      throw new GatewayError('unsupported', `Provider '${provider}' cannot host fine-tuning jobs in this gateway yet`, {
        param: 'gatewayOptions.x-gateway-provider',
        code: 'unsupported_provider',
      });
    }
    const adapter = this.providers.adapter(provider);
    for (const op of HOSTED_OPERATIONS) {
      try {
        requireOperation(adapter, op);
      } catch (err) {
        throw err instanceof GatewayError ? err.withParam('gatewayOptions.x-gateway-provider') : err;
      }
    }
  }
}

/** The method to send: the caller's `method`, or the legacy top-level `hyperparameters` as supervised. */
function requestedMethod(data: CreateJobData): { method: Record<string, unknown> | undefined; legacy: boolean } {
  if (data.method) return { method: data.method as Record<string, unknown>, legacy: false };
  if (data.hyperparameters) return { method: { type: 'supervised', supervised: { hyperparameters: data.hyperparameters } }, legacy: true };
  return { method: undefined, legacy: false };
}

const compact = (o: Record<string, string | undefined>): Record<string, string> =>
  Object.fromEntries(Object.entries(o).filter((e): e is [string, string] => e[1] !== undefined));

const invalidCursor = (after: string, what: string) => badRequest(`after: no ${what} with id '${after}'`, 'after', 'invalid_cursor');

const notCancellable = (job: FineTuningJob) =>
  badRequest(`Fine-tuning job '${job.id}' has already ${job.status === 'cancelled' ? 'been cancelled' : job.status}; it cannot be cancelled`, null, 'job_not_cancellable');
