/**
 * The job monitor: a background loop in every gateway process that moves hosted fine-tuning jobs
 * forward. Each tick claims due jobs with a row lease (`FOR UPDATE SKIP LOCKED`, so several processes
 * on one database never work on the same job, and a crashed process's jobs are taken over once its
 * leases expire), then runs one idempotent step per job:
 *
 *   (a) no provider file yet   → stream the gateway file to the provider, store the provider file id;
 *   (b) no provider job yet    → create it (after looking for one a crashed attempt may have created,
 *                                by the gateway job id sent in its metadata), store its id at once;
 *   (c) otherwise              → poll it: status, model, tokens, error, times, events, checkpoints;
 *   (*) cancel pending         → cancel the provider job once its id is known.
 *
 * and hands the job back with its next poll time: sooner after a change, backing off (up to a cap)
 * while nothing changes or while the provider is failing (429/5xx). A provider refusing the job (any
 * other 4xx) fails the job with the provider's error. Finished jobs are never claimed again.
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { Readable } from 'node:stream';
import type { Scope } from '../../auth/scope';
import { GatewayError } from '../../errors';
import type { FineTuningJob } from '../../generated/prisma/client';
import type { Logger } from '../../logger';
import {
  requireOperation,
  type CreateJobInput,
  type FineTuningProvider,
  type ProviderCheckpoint,
  type ProviderContext,
  type ProviderEvent,
  type ProviderJob,
} from '../../providers/types';
import type { EventDraft, FineTuningRepository } from './fine-tuning.repository';
import type { FineTuningService, TrainingFileSource } from './fine-tuning.service';
import { failed, fromProviderJob, isTerminal } from './fine-tuning.state';

export interface JobMonitorOptions {
  /** How often to look for due work, and the base poll interval of a job (config.jobPollMs). */
  pollMs: number;
  /** How long a claimed job stays claimed without renewal (config.jobLeaseMs). */
  leaseMs: number;
  /** Jobs claimed per tick (default 10). */
  batchSize?: number;
}

/** A job polled with no news waits pollMs · 2^n, at most this many poll intervals. */
const MAX_IDLE_FACTOR = 12;
/** After failures (provider 429/5xx, network), the same back-off up to this many poll intervals. */
const MAX_RETRY_FACTOR = 60;
/** Failures in a row before a job not yet submitted is given up (a submitted job is followed forever). */
const MAX_SUBMIT_FAILURES = 20;
/** The metadata key carrying the gateway job id to the provider (for finding a job after a crash). */
export const GATEWAY_JOB_ID_METADATA_KEY = 'gateway_job_id';
/** Provider job pages searched for a job a crashed attempt may have created. */
const MAX_LOOKUP_PAGES = 5;
/** Event/checkpoint pages fetched per poll (newest first, until a known one is seen). */
const MAX_HISTORY_PAGES = 10;

interface Release {
  delayMs: number;
  idlePolls: number;
  failedAttempts: number;
  clearCancelPending?: boolean;
}

type Connection = { adapter: FineTuningProvider; ctx: ProviderContext };

export class JobMonitor {
  /** Identifies this process's leases; unique per monitor, so two in one process never share one. */
  readonly owner = `${os.hostname()}:${process.pid}:${randomBytes(6).toString('hex')}`;
  private readonly batchSize: number;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();
  private stopped = true;

  constructor(
    private readonly jobs: FineTuningRepository,
    private readonly service: FineTuningService,
    private readonly files: TrainingFileSource,
    private readonly logger: Logger,
    private readonly options: JobMonitorOptions,
  ) {
    this.batchSize = options.batchSize ?? 10;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule(0);
    this.logger.debug({ owner: this.owner, pollMs: this.options.pollMs, leaseMs: this.options.leaseMs }, 'job monitor started');
  }

  /** Stops claiming work and waits for the steps in flight; their leases are released as usual. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.running = this.tick().then((claimed) => this.schedule(claimed >= this.batchSize ? 0 : this.options.pollMs));
    }, delayMs);
    this.timer.unref();
  }

  /** One round: claim due jobs and step each; returns how many were claimed. */
  async tick(): Promise<number> {
    let claimed: FineTuningJob[];
    try {
      claimed = await this.jobs.claimDue(this.owner, this.options.leaseMs, this.batchSize);
    } catch (err) {
      this.logger.error({ err }, 'job monitor could not claim jobs');
      return 0;
    }
    await Promise.all(claimed.map((job) => this.process(job)));
    return claimed.length;
  }

  private async process(job: FineTuningJob): Promise<void> {
    const scope: Scope = { organisationId: job.organisationId, workspaceId: job.workspaceId };
    // Keeps the lease while a long step (a large upload) runs.
    const heartbeat = setInterval(
      () => void this.jobs.renewLease(scope, job.id, this.owner, this.options.leaseMs).catch(() => undefined),
      Math.max(10, Math.floor(this.options.leaseMs / 3)),
    );
    heartbeat.unref();
    try {
      const release = await this.step(scope, job);
      await this.jobs.release(scope, job.id, this.owner, release);
    } catch (err) {
      // Only the release itself can end up here; the lease then simply expires.
      this.logger.error({ err, jobId: job.id }, 'job monitor could not release a job');
    } finally {
      clearInterval(heartbeat);
    }
  }

  private async step(scope: Scope, job: FineTuningJob): Promise<Release> {
    const pollMs = this.options.pollMs;
    try {
      const connection = await this.service.connect(scope, job);
      if (job.providerCancelPending) {
        await this.finishCancel(scope, job, connection);
        return { delayMs: pollMs, idlePolls: 0, failedAttempts: 0, clearCancelPending: true };
      }
      if (isTerminal(job.status)) return { delayMs: pollMs, idlePolls: 0, failedAttempts: 0 };
      if (!job.providerJobId) return await this.submit(scope, job, connection);
      return await this.poll(scope, job, connection);
    } catch (err) {
      return this.onError(scope, job, err);
    }
  }

  // (a) + (b)
  private async submit(scope: Scope, job: FineTuningJob, connection: Connection): Promise<Release> {
    const { adapter, ctx } = connection;
    if (!job.providerTrainingFileId) {
      job.providerTrainingFileId = await this.upload(scope, job, 'training', job.trainingFileId, connection);
    }
    if (job.validationFileId && !job.providerValidationFileId) {
      job.providerValidationFileId = await this.upload(scope, job, 'validation', job.validationFileId, connection);
    }

    let remote = job.submitAttempts > 0 ? await this.findSubmitted(job, connection) : undefined;
    if (!remote) {
      // Counted before the call: whoever resumes this job after a crash looks for the job first.
      if (!(await this.jobs.beginSubmit(scope, job.id, this.owner, this.options.leaseMs))) {
        // Cancelled meanwhile, or the lease was lost: the next claim sees the new state.
        return { delayMs: 0, idlePolls: 0, failedAttempts: job.failedAttempts };
      }
      remote = await requireOperation(adapter, 'createJob')(ctx, this.createInput(job));
    }
    const saved = await this.jobs.saveProviderJobId(scope, job.id, remote.id);
    if (!saved) return { delayMs: this.options.pollMs, idlePolls: 0, failedAttempts: 0 };
    if (saved.providerJobId !== remote.id) {
      // Another process submitted too (its lease outlived ours): keep theirs, withdraw ours.
      this.logger.warn({ jobId: job.id, kept: saved.providerJobId, duplicate: remote.id }, 'duplicate provider job cancelled');
      await requireOperation(adapter, 'cancelJob')(ctx, remote.id).catch(() => undefined);
      return { delayMs: this.options.pollMs, idlePolls: 0, failedAttempts: 0 };
    }
    this.logger.info({ jobId: job.id, provider: job.provider, providerJobId: remote.id }, 'fine-tuning job submitted');
    if (saved.providerCancelPending) {
      // Cancelled while the create call was in flight: cancel it at the provider straight away.
      await this.finishCancel(scope, saved, connection);
      return { delayMs: this.options.pollMs, idlePolls: 0, failedAttempts: 0, clearCancelPending: true };
    }
    const submitted: EventDraft = {
      level: 'info',
      message: `Submitted to ${job.provider} as ${remote.id}`,
      type: 'message',
      data: { provider_job_id: remote.id },
    };
    const found = remote;
    await this.jobs.mutate(scope, job.id, (current) => {
      if (isTerminal(current.status)) return null;
      const change = fromProviderJob(current, found, [], []) ?? { data: {} };
      return { ...change, events: [submitted, ...(change.events ?? [])] };
    });
    return { delayMs: this.options.pollMs, idlePolls: 0, failedAttempts: 0 };
  }

  /** Streams a gateway file to the provider and stores the provider's file id at once. */
  private async upload(scope: Scope, job: FineTuningJob, which: 'training' | 'validation', fileId: string, connection: Connection): Promise<string> {
    const param = which === 'training' ? 'training_file' : 'validation_file';
    const file = await this.files.get(scope, fileId).catch((err: unknown) => {
      throw err instanceof GatewayError ? err.withParam(param) : err;
    });
    const files = this.files;
    const uploaded = await requireOperation(connection.adapter, 'uploadFile')(connection.ctx, {
      filename: file.filename,
      purpose: 'fine-tune',
      bytes: Number(file.bytes),
      open: () =>
        Readable.from(
          (async function* () {
            for await (const chunk of await files.openContent(scope, fileId)) yield chunk;
          })(),
        ),
    });
    await this.jobs.saveProviderFile(scope, job.id, which, uploaded.id);
    await this.jobs.mutate(scope, job.id, (current) =>
      isTerminal(current.status)
        ? null
        : {
            data: {},
            events: [{ level: 'info', message: `Uploaded ${which} file to ${job.provider} as ${uploaded.id}`, type: 'message', data: { file_id: fileId, provider_file_id: uploaded.id } }],
          },
    );
    return uploaded.id;
  }

  private createInput(job: FineTuningJob): CreateJobInput {
    const method = job.method as Record<string, unknown> | null;
    const metadata: Record<string, string> = { ...((job.metadata as Record<string, string> | null) ?? {}) };
    // OpenAI allows 16 pairs: with 16 of the caller's, the stored provider job id alone guards resubmission.
    if (Object.keys(metadata).length < 16 || GATEWAY_JOB_ID_METADATA_KEY in metadata) metadata[GATEWAY_JOB_ID_METADATA_KEY] = job.id;
    const legacy = job.legacyHyperparameters && method ? ((method.supervised as { hyperparameters?: Record<string, unknown> })?.hyperparameters ?? {}) : undefined;
    const input: CreateJobInput = {
      model: job.providerModel ?? job.model,
      trainingFile: job.providerTrainingFileId!,
      metadata,
    };
    if (job.providerValidationFileId) input.validationFile = job.providerValidationFileId;
    if (job.suffix !== null) input.suffix = job.suffix;
    if (job.seed !== null) input.seed = job.seed;
    if (legacy) input.hyperparameters = legacy;
    else if (method) input.method = method;
    return input;
  }

  /** A provider job an earlier attempt created (it carries our id in its metadata), if any. */
  private async findSubmitted(job: FineTuningJob, { adapter, ctx }: Connection): Promise<ProviderJob | undefined> {
    if (!adapter.listJobs) return undefined;
    let after: string | undefined;
    for (let page = 0; page < MAX_LOOKUP_PAGES; page++) {
      const found = await adapter.listJobs(ctx, { after, limit: 100 });
      const mine = found.data.find((j) => j.metadata?.[GATEWAY_JOB_ID_METADATA_KEY] === job.id);
      if (mine) {
        this.logger.info({ jobId: job.id, providerJobId: mine.id }, 'found the provider job of an interrupted submission');
        return mine;
      }
      if (!found.hasMore || !found.data.length) return undefined;
      after = found.data[found.data.length - 1].id;
    }
    return undefined;
  }

  // (c)
  private async poll(scope: Scope, job: FineTuningJob, connection: Connection): Promise<Release> {
    const { adapter, ctx } = connection;
    const providerJobId = job.providerJobId!;
    const remote = await requireOperation(adapter, 'getJob')(ctx, providerJobId);
    const events = await this.unseen(
      (after) => (adapter.listEvents ? adapter.listEvents(ctx, providerJobId, { after, limit: 100 }) : undefined),
      (ids) => this.jobs.knownProviderEventIds(scope, job.id, ids),
    );
    const checkpoints =
      remote.status === 'validating_files' || remote.status === 'queued'
        ? []
        : await this.unseen(
            (after) => (adapter.listCheckpoints ? adapter.listCheckpoints(ctx, providerJobId, { after, limit: 100 }) : undefined),
            (ids) => this.jobs.knownProviderCheckpointIds(scope, job.id, ids),
          );
    const result = await this.jobs.mutate(scope, job.id, (current) => fromProviderJob(current, remote, events, checkpoints));
    if (result && isTerminal(result.job.status) && result.changed) {
      this.logger.info({ jobId: job.id, status: result.job.status, providerJobId }, 'fine-tuning job finished');
    }
    const pollMs = this.options.pollMs;
    if (!result || result.changed) return { delayMs: pollMs, idlePolls: 0, failedAttempts: 0 };
    const idlePolls = job.idlePolls + 1;
    return { delayMs: Math.min(pollMs * 2 ** idlePolls, pollMs * MAX_IDLE_FACTOR), idlePolls, failedAttempts: 0 };
  }

  /** The provider's items (newest-first pages) not stored yet, oldest first. */
  private async unseen<T extends ProviderEvent | ProviderCheckpoint>(
    fetchPage: (after: string | undefined) => Promise<{ data: T[]; hasMore: boolean }> | undefined,
    known: (ids: string[]) => Promise<Set<string>>,
  ): Promise<T[]> {
    const fresh: T[] = [];
    let after: string | undefined;
    for (let page = 0; page < MAX_HISTORY_PAGES; page++) {
      const result = await fetchPage(after);
      if (!result) break;
      const seen = await known(result.data.map((item) => item.id));
      const unseen = result.data.filter((item) => !seen.has(item.id));
      fresh.push(...unseen);
      if (unseen.length < result.data.length || !result.hasMore || !result.data.length) break;
      after = result.data[result.data.length - 1].id;
    }
    return fresh.reverse();
  }

  /** Cancels the provider job of a job cancelled here (finding it first if a submission was cut short). */
  private async finishCancel(scope: Scope, job: FineTuningJob, connection: Connection): Promise<void> {
    let providerJobId = job.providerJobId;
    if (!providerJobId && job.submitAttempts > 0) {
      const found = await this.findSubmitted(job, connection);
      if (found) providerJobId = (await this.jobs.saveProviderJobId(scope, job.id, found.id))?.providerJobId ?? found.id;
    }
    if (!providerJobId) return;
    try {
      await requireOperation(connection.adapter, 'cancelJob')(connection.ctx, providerJobId);
    } catch (err) {
      if (isTransient(err)) throw err;
      // Typically "already finished": nothing left to cancel there.
      this.logger.info({ jobId: job.id, providerJobId, reason: (err as Error).message }, 'provider did not cancel the job');
      return;
    }
    this.logger.info({ jobId: job.id, providerJobId }, 'fine-tuning job cancelled at the provider');
    await this.jobs.mutate(scope, job.id, () => ({
      data: {},
      events: [{ level: 'info', message: `Cancelled at ${job.provider}`, type: 'message', data: { provider_job_id: providerJobId } }],
    }));
  }

  private async onError(scope: Scope, job: FineTuningJob, err: unknown): Promise<Release> {
    const pollMs = this.options.pollMs;
    const failedAttempts = job.failedAttempts + 1;
    const gaveUp = !job.providerJobId && !job.providerCancelPending && failedAttempts >= MAX_SUBMIT_FAILURES;
    if (isTransient(err) && !gaveUp) {
      const delayMs = Math.min(pollMs * 2 ** failedAttempts, pollMs * MAX_RETRY_FACTOR);
      this.logger.warn({ err: describe(err), jobId: job.id, failedAttempts, retryInMs: delayMs }, 'fine-tuning job step failed; will retry');
      return { delayMs, idlePolls: job.idlePolls, failedAttempts };
    }
    const error = jobError(err);
    this.logger.warn({ jobId: job.id, error }, 'fine-tuning job failed');
    try {
      await this.jobs.mutate(scope, job.id, (current) => failed(current, error));
    } catch (writeErr) {
      this.logger.error({ err: writeErr, jobId: job.id }, 'could not record a failed fine-tuning job');
      return { delayMs: Math.min(pollMs * 2 ** failedAttempts, pollMs * MAX_RETRY_FACTOR), idlePolls: job.idlePolls, failedAttempts };
    }
    return { delayMs: pollMs, idlePolls: 0, failedAttempts: 0, clearCancelPending: job.providerCancelPending };
  }
}

/** Worth retrying later: the provider's 429 and 5xx (incl. timeouts and unreachable), and our own unexpected failures. */
export function isTransient(err: unknown): boolean {
  if (!(err instanceof GatewayError)) return true;
  if (err.kind === 'provider') return err.status === 429 || err.status >= 500;
  return err.kind === 'rate_limited';
}

/** The job's `error` object: the provider's code, message and param when it refused. */
function jobError(err: unknown): { code: string; message: string; param: string | null } {
  if (err instanceof GatewayError) {
    const code = err.code ?? (err.kind === 'provider' ? 'provider_error' : err.kind);
    return { code, message: err.message, param: err.param };
  }
  return { code: 'internal_error', message: 'The gateway could not run this job step', param: null };
}

/** A log-safe description of an error (a GatewayError's message is already free of credentials). */
const describe = (err: unknown) =>
  err instanceof GatewayError ? { kind: err.kind, status: err.status, code: err.code, message: err.message } : err;
