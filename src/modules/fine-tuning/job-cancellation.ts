/**
 * Cancelling a hosted job at its provider: the one path the API's cancel and the job monitor share,
 * with one failure policy. The provider stops the job (its answer is applied like a poll: status,
 * times, and the events recording them), refuses (typically "already finished": noted as an event,
 * nothing left to cancel there), or cannot be reached (the cancel stays pending and the monitor
 * tries again). A provider without a cancel operation keeps running the job: the gateway stops
 * following it and says so.
 */
import type { Scope } from '../../auth/scope';
import type { Logger } from '../../logger';
import type { ProviderClient } from '../../providers/registry';
import type { ProviderJob } from '../../providers/types';
import type { HostedJob } from './fine-tuning.model';
import type { EventDraft, FineTuningRepository, JobChange } from './fine-tuning.repository';
import { cancelled, fromProviderJob } from './fine-tuning.state';
import { isTransient } from './job-errors';
import type { JobLeases } from './job-leases';

export interface CancelOptions {
  /** The API's cancel answers with the job as it stands; the monitor rethrows so its back-off applies. */
  transient: 'keep-pending' | 'throw';
}

export class JobCancellation {
  constructor(
    private readonly jobs: FineTuningRepository,
    private readonly leases: JobLeases,
    private readonly logger: Logger,
  ) {}

  /** Cancels the provider job of `job` (whose cancel is pending) and returns the job as it then stands. */
  async run(scope: Scope, job: HostedJob, provider: ProviderClient, options: CancelOptions): Promise<HostedJob> {
    const providerJobId = job.providerJobId ?? (job.submitAttempts > 0 ? await this.adoptInterrupted(scope, job, provider) : null);
    if (!providerJobId) return this.settle(scope, job, () => ({ data: { providerCancelPending: false } }));
    if (!provider.supports('cancelJob')) {
      const note = event('warn', `${provider.title} has no cancel operation: the job keeps running there, and the gateway no longer follows it`, providerJobId);
      return this.settle(scope, job, (current) => cancelled(current, false, [note]) ?? { data: { providerCancelPending: false }, events: [note] });
    }
    let remote: ProviderJob;
    try {
      remote = await provider.cancelJob(providerJobId);
    } catch (err) {
      if (isTransient(err)) {
        if (options.transient === 'throw') throw err;
        this.logger.warn({ jobId: job.id, providerJobId }, 'could not reach the provider to cancel a job; the monitor will retry');
        return job;
      }
      return this.refused(scope, job, provider, providerJobId, err);
    }
    this.logger.info({ jobId: job.id, providerJobId }, 'fine-tuning job cancelled at the provider');
    const note = event('info', `Cancelled at ${provider.title}`, providerJobId);
    return this.settle(scope, job, (current) => withCancelDone(fromProviderJob(current, remote, [], []), note));
  }

  /**
   * The provider refused: typically the job finished (or was cancelled by a concurrent request)
   * meanwhile. Its current state is what the job shows now; a refusal that was not about a job
   * already cancelled is noted as an event.
   */
  private async refused(scope: Scope, job: HostedJob, provider: ProviderClient, providerJobId: string, err: unknown): Promise<HostedJob> {
    const reason = err instanceof Error ? err.message : 'refused';
    this.logger.info({ jobId: job.id, providerJobId, reason }, 'provider did not cancel the job');
    const remote = await provider.getJob(providerJobId).catch(() => null);
    const note = remote?.status === 'cancelled' ? [] : [event('warn', `${provider.title} did not cancel the job: ${reason}`, providerJobId)];
    return this.settle(scope, job, (current) => {
      const change = remote ? fromProviderJob(current, remote, [], []) : null;
      return { ...change, data: { ...change?.data, ...cancelDone() }, events: [...note, ...(change?.events ?? [])] };
    });
  }

  /** A submission cut short may have created a provider job: find it, and keep its id. */
  private async adoptInterrupted(scope: Scope, job: HostedJob, provider: ProviderClient): Promise<string | null> {
    if (!provider.supports('findJob')) return null;
    const found = await provider.findJob(job.id);
    if (!found) return null;
    return (await this.leases.saveProviderJobId(scope, job.id, found.id))?.providerJobId ?? found.id;
  }

  private async settle(scope: Scope, job: HostedJob, decide: (current: HostedJob) => JobChange | null): Promise<HostedJob> {
    return (await this.jobs.mutate(scope, job.id, decide))?.job ?? job;
  }
}

const event = (level: EventDraft['level'], message: string, providerJobId: string): EventDraft => ({
  level,
  message,
  type: 'message',
  data: { provider_job_id: providerJobId },
});

/**
 * The cancel is carried out: the monitor follows the job again at once (the hand-over delay of the
 * API's cancel no longer applies), so a provider still stopping the job (Vertex's CANCELLING,
 * Bedrock's Stopping) shows `cancelled` as soon as it reports it.
 */
const cancelDone = () => ({ providerCancelPending: false, nextPollAt: new Date() });

/**
 * The provider's answer to the cancel (if it changes anything) with the cancel marked done and noted.
 * A provider still stopping the job (Together's `cancel_requested`, Bedrock's `Stopping`) is read again
 * at the next poll, not after the API's hand-over delay, so the job shows `cancelled` once it is.
 */
function withCancelDone(change: JobChange | null, note: EventDraft): JobChange {
  return { ...change, data: { ...change?.data, ...cancelDone() }, events: [note, ...(change?.events ?? [])] };
}
