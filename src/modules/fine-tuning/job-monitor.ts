/**
 * The job monitor: a background loop in every gateway process that moves hosted fine-tuning jobs
 * forward. Each tick claims due jobs with a row lease (JobLeases: `FOR UPDATE SKIP LOCKED`, so
 * several processes on one database never work on the same job, and a crashed process's jobs are
 * taken over once its leases expire), then runs one idempotent step per job:
 *
 *   cancel pending          → cancel at the provider (JobCancellation);
 *   no provider job yet     → upload the files, create the job (JobSubmission);
 *   otherwise               → poll it (JobPolling);
 *
 * and hands the job back with its next poll time. A failing step is retried with back-off while
 * the provider answers 429/5xx or cannot be reached, and the job's answers say so (`gateway_status`):
 * what failed, how often, when the next attempt is. A job not yet submitted is retried until
 * `submitDeadlineMs` after its first failure, then fails as `provider_unreachable`; a submitted one
 * is followed until it ends. Any other refusal fails the job with the provider's error. Finished
 * jobs are never claimed again.
 *
 * While the database is out of reach the monitor pauses: it logs that once, keeps the hand-backs it
 * could not write and writes them first when the database answers again (so no job waits for its
 * lease to expire), and logs the resumption once. A step cut short by the outage repeats nothing:
 * submission looks for a provider job an interrupted attempt may have created (JobSubmission).
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import type { Scope } from '../../auth/scope';
import { isDatabaseUnavailable } from '../../db/outage';
import { PROVIDER_UNREACHABLE } from '../../errors';
import type { Logger } from '../../logger';
import type { ProviderRegistry } from '../../providers/registry';
import type { JobStep, JobStepTracer } from '../../telemetry/tracing';
import { isTerminal, type HostedJob, type JobError, type RetryError } from './fine-tuning.model';
import type { EventDraft, FineTuningRepository } from './fine-tuning.repository';
import type { FineTuningService, TrainingFileSource } from './fine-tuning.service';
import { failed } from './fine-tuning.state';
import type { JobCancellation } from './job-cancellation';
import { describeError, isTransient, jobError, retryError } from './job-errors';
import { keepLease } from '../../db/leases';
import type { JobLeases, Release } from './job-leases';
import { JobPolling } from './job-polling';
import { JobSubmission } from './job-submission';

export interface JobMonitorOptions {
  /** How often to look for due work, and the base poll interval of a job (config.jobPollMs). */
  pollMs: number;
  /** How long a claimed job stays claimed without renewal (config.jobLeaseMs). */
  leaseMs: number;
  /** How long a job not yet submitted is retried after its first failure before it fails (config.jobSubmitDeadlineMs). */
  submitDeadlineMs: number;
  /** Jobs claimed per tick (default 10). */
  batchSize?: number;
}

export interface JobMonitorParts {
  jobs: FineTuningRepository;
  leases: JobLeases;
  service: FineTuningService;
  files: TrainingFileSource;
  cancellation: JobCancellation;
  /** Names providers in a job's error. */
  providers: Pick<ProviderRegistry, 'module'>;
  /** Each step in a span of its own when tracing is on. */
  tracer?: JobStepTracer | null;
}

/** What a claimed job's step does: a cancel the provider has not confirmed first, nothing more for a finished job, then submit or poll. */
function stepOf(job: HostedJob): JobStep['step'] {
  if (job.providerCancelPending) return 'cancel';
  if (isTerminal(job.status)) return 'settle';
  return job.providerJobId ? 'poll' : 'submit';
}

/** After failures (provider 429/5xx, network), pollMs · 2^n up to this many poll intervals. */
const MAX_RETRY_FACTOR = 60;

export class JobMonitor {
  /** Identifies this process's leases; unique per monitor, so two in one process never share one. */
  readonly owner = `${os.hostname()}:${process.pid}:${randomBytes(6).toString('hex')}`;
  private readonly batchSize: number;
  private readonly submission: JobSubmission;
  private readonly polling: JobPolling;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();
  private stopped = true;
  /** The database was out of reach at the last attempt (logged once per outage). */
  private paused = false;
  /** Hand-backs the database refused during an outage, by job id: written first when it returns. */
  private readonly unreleased = new Map<string, { scope: Scope; next: Release }>();

  constructor(
    private readonly parts: JobMonitorParts,
    private readonly logger: Logger,
    private readonly options: JobMonitorOptions,
  ) {
    this.batchSize = options.batchSize ?? 10;
    const { jobs, leases, files, cancellation } = parts;
    this.submission = new JobSubmission(jobs, leases, files, cancellation, logger, { owner: this.owner, leaseMs: options.leaseMs, pollMs: options.pollMs });
    this.polling = new JobPolling(jobs, logger, options.pollMs);
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule(0);
    this.logger.debug({ owner: this.owner, pollMs: this.options.pollMs, leaseMs: this.options.leaseMs }, 'job monitor started');
  }

  /**
   * Stops claiming work and waits for the steps in flight, whose leases are released as usual. Steps
   * still running after `graceMs` are left to finish on their own, but their jobs are handed back at
   * once (due now), so another replica picks them up without waiting for the leases to expire.
   */
  async stop(graceMs = Number.POSITIVE_INFINITY): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    let timer: NodeJS.Timeout | undefined;
    const overdue = new Promise<true>((resolve) => {
      if (Number.isFinite(graceMs)) timer = setTimeout(() => resolve(true), graceMs);
    });
    const late = await Promise.race([this.running.then(() => false), overdue]);
    clearTimeout(timer);
    if (!late) return;
    try {
      const count = await this.parts.leases.handBackAll(this.owner);
      this.logger.warn({ jobs: count, graceMs }, 'job steps still running at shutdown; their jobs were handed back');
    } catch (err) {
      // The leases then expire as after a crash.
      this.logger.error({ err }, 'could not hand back the jobs of steps still running at shutdown');
    }
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
    let claimed: HostedJob[];
    try {
      await this.releasePending();
      claimed = await this.parts.leases.claimDue(this.owner, this.options.leaseMs, this.batchSize);
    } catch (err) {
      if (isDatabaseUnavailable(err)) this.pause(err);
      else this.logger.error({ err }, 'job monitor could not claim jobs');
      return 0;
    }
    this.resume();
    await Promise.all(claimed.map((job) => this.process(job)));
    return claimed.length;
  }

  private pause(err: unknown): void {
    if (this.paused) return;
    this.paused = true;
    this.logger.warn({ err }, 'database unavailable: job monitor paused');
  }

  private resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.logger.info({ handedBack: this.unreleased.size }, 'database available again: job monitor resumed');
  }

  /** Writes the hand-backs an outage interrupted; throws (the database is still away) on the first that fails. */
  private async releasePending(): Promise<void> {
    for (const [id, { scope, next }] of this.unreleased) {
      await this.parts.leases.release(scope, id, this.owner, next);
      this.unreleased.delete(id);
    }
  }

  private async process(job: HostedJob): Promise<void> {
    const scope: Scope = { organisationId: job.organisationId, workspaceId: job.workspaceId };
    const { leases } = this.parts;
    // Keeps the lease while a long step (a large upload) runs.
    const stopRenewing = keepLease(() => leases.renewLease(scope, job.id, this.owner, this.options.leaseMs), this.options.leaseMs);
    let next: Release | undefined;
    try {
      // `step` settles every failure of the step itself: only the release can throw here.
      next = await this.step(scope, job);
      await leases.release(scope, job.id, this.owner, next);
    } catch (err) {
      if (next && isDatabaseUnavailable(err)) {
        this.unreleased.set(job.id, { scope, next });
        this.pause(err);
      } else {
        // The lease then simply expires.
        this.logger.error({ err, jobId: job.id }, 'job monitor could not release a job');
      }
    } finally {
      stopRenewing();
    }
  }

  private async step(scope: Scope, job: HostedJob): Promise<Release> {
    const kind = stepOf(job);
    const tracer = this.parts.tracer;
    try {
      if (!tracer) return await this.run(scope, job, kind);
      const traced = { jobId: job.id, provider: job.provider, status: job.status, step: kind, failedAttempts: job.failedAttempts };
      return await tracer.step(traced, () => this.run(scope, job, kind));
    } catch (err) {
      return this.onError(scope, job, err);
    }
  }

  private async run(scope: Scope, job: HostedJob, kind: JobStep['step']): Promise<Release> {
    const provider = await this.parts.service.connect(scope, job);
    switch (kind) {
      case 'cancel':
        await this.parts.cancellation.run(scope, job, provider, { transient: 'throw' });
        return this.done();
      case 'settle':
        return this.done();
      case 'submit':
      case 'poll':
        return job.providerJobId ? this.polling.poll(scope, job, job.providerJobId, provider) : this.submission.submit(scope, job, provider);
    }
  }

  private done(): Release {
    return { delayMs: this.options.pollMs, idlePolls: 0, failedAttempts: 0 };
  }

  private async onError(scope: Scope, job: HostedJob, err: unknown): Promise<Release> {
    const pollMs = this.options.pollMs;
    if (isDatabaseUnavailable(err)) {
      // Not the job's fault: no failure counted, the step repeats once the database is back.
      this.pause(err);
      return { delayMs: pollMs, idlePolls: job.idlePolls, failedAttempts: job.failedAttempts };
    }
    const failedAttempts = job.failedAttempts + 1;
    const backOff = { delayMs: Math.min(pollMs * 2 ** failedAttempts, pollMs * MAX_RETRY_FACTOR), idlePolls: job.idlePolls, failedAttempts };
    if (!isTransient(err)) return this.fail(scope, job, jobError(err), backOff);
    const retry = { error: retryError(err), giveUpAt: this.giveUpAt(job) };
    if (retry.giveUpAt && Date.now() >= retry.giveUpAt.getTime()) {
      return this.fail(scope, job, this.deadlineError(job, failedAttempts, retry.error), backOff);
    }
    // The last attempt is made at the deadline, not a back-off later.
    const delayMs = retry.giveUpAt ? Math.max(0, Math.min(backOff.delayMs, retry.giveUpAt.getTime() - Date.now())) : backOff.delayMs;
    this.logger.warn({ err: describeError(err), jobId: job.id, failedAttempts, retryInMs: delayMs }, 'fine-tuning job step failed; will retry');
    await this.recordRetry(scope, job, retry.error, delayMs);
    return { ...backOff, delayMs, retry };
  }

  /** When a job not yet submitted gives up (set at its first failure); null for a submitted job, followed until it ends. */
  private giveUpAt(job: HostedJob): Date | null {
    if (job.providerJobId || job.providerCancelPending) return null;
    return job.retry?.giveUpAt ?? new Date(Date.now() + this.options.submitDeadlineMs);
  }

  /** The job's error once it could not be submitted before the deadline. */
  private deadlineError(job: HostedJob, attempts: number, last: RetryError): JobError {
    const provider = this.parts.providers.module(job.provider).title;
    const tried = `${attempts} attempts over ${duration(this.options.submitDeadlineMs)}; the last one: ${last.message}`;
    // The gateway's own failure (its file store, say) is not the provider's.
    if (last.reason === 'gateway_error')
      return { code: 'internal_error', message: `The gateway could not submit the job to ${provider} (${tried})`, param: null };
    return { code: PROVIDER_UNREACHABLE, message: `${provider} could not be reached to submit the job (${tried})`, param: null };
  }

  private async fail(scope: Scope, job: HostedJob, error: JobError, backOff: Release): Promise<Release> {
    this.logger.warn({ jobId: job.id, error }, 'fine-tuning job failed');
    try {
      await this.parts.jobs.mutate(scope, job.id, (current) => failed(current, error));
    } catch (writeErr) {
      this.logger.error({ err: writeErr, jobId: job.id }, 'could not record a failed fine-tuning job');
      return backOff;
    }
    return { delayMs: this.options.pollMs, idlePolls: 0, failedAttempts: 0, clearCancelPending: job.providerCancelPending };
  }

  /** The job's event for a failed step that will be retried, so callers see it while it happens (not only the log). */
  private async recordRetry(scope: Scope, job: HostedJob, error: RetryError, delayMs: number): Promise<void> {
    const event: EventDraft = {
      level: 'warn',
      message: `Provider call failed (${error.message}); retrying in ${Math.ceil(delayMs / 1000)} s`,
      type: 'message',
      data: { code: error.code, reason: error.reason, status: error.status, retry_in_ms: delayMs },
    };
    try {
      await this.parts.jobs.mutate(scope, job.id, (current) => (isTerminal(current.status) ? null : { data: {}, events: [event] }));
    } catch (writeErr) {
      this.logger.error({ err: writeErr, jobId: job.id }, 'could not record a retry event');
    }
  }
}

/** A duration for a message: `1.5 s`, `15 min`. */
const duration = (ms: number) => (ms < 60_000 ? `${Math.round(ms / 100) / 10} s` : `${Math.round(ms / 6000) / 10} min`);
