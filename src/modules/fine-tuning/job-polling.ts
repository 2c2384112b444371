/**
 * Following a submitted job: read it at the provider, copy what changed (status, model, tokens,
 * error, times, settled hyperparameters) with the events and checkpoints not stored yet, and say
 * when to look again — soon after a change, backing off (up to a cap) while nothing changes.
 */
import type { Scope } from '../../auth/scope';
import type { Logger } from '../../logger';
import type { ProviderClient } from '../../providers/registry';
import type { PageInput, ProviderCheckpoint, ProviderEvent, ProviderPage } from '../../providers/types';
import { isTerminal, type HostedJob } from './fine-tuning.model';
import type { FineTuningRepository } from './fine-tuning.repository';
import { fromProviderJob } from './fine-tuning.state';
import type { Release } from './job-leases';

/** A job polled with no news waits pollMs · 2^n, at most this many poll intervals. */
const MAX_IDLE_FACTOR = 12;
/** Event/checkpoint pages fetched per poll (newest first, until a known one is seen). */
const MAX_HISTORY_PAGES = 10;

export class JobPolling {
  constructor(
    private readonly jobs: FineTuningRepository,
    private readonly logger: Logger,
    private readonly pollMs: number,
  ) {}

  async poll(scope: Scope, job: HostedJob, providerJobId: string, provider: ProviderClient): Promise<Release> {
    const remote = await provider.getJob(providerJobId);
    const events = provider.supports('listEvents')
      ? await this.unseen(
          (page) => provider.listEvents(providerJobId, page),
          (ids) => this.jobs.knownProviderEventIds(scope, job.id, ids),
        )
      : [];
    const started = remote.status !== 'validating_files' && remote.status !== 'queued';
    const checkpoints =
      started && provider.supports('listCheckpoints')
        ? await this.unseen(
            (page) => provider.listCheckpoints(providerJobId, page),
            (ids) => this.jobs.knownProviderCheckpointIds(scope, job.id, ids),
          )
        : [];
    const result = await this.jobs.mutate(scope, job.id, (current) => fromProviderJob(current, remote, events, checkpoints));
    if (result && isTerminal(result.job.status) && result.changed) {
      this.logger.info({ jobId: job.id, status: result.job.status, providerJobId }, 'fine-tuning job finished');
    }
    if (!result || result.changed) return { delayMs: this.pollMs, idlePolls: 0, failedAttempts: 0 };
    const idlePolls = job.idlePolls + 1;
    return { delayMs: Math.min(this.pollMs * 2 ** idlePolls, this.pollMs * MAX_IDLE_FACTOR), idlePolls, failedAttempts: 0 };
  }

  /** The provider's items (newest-first pages) not stored yet, oldest first. */
  private async unseen<T extends ProviderEvent | ProviderCheckpoint>(
    fetchPage: (page: PageInput) => Promise<ProviderPage<T>>,
    known: (ids: string[]) => Promise<Set<string>>,
  ): Promise<T[]> {
    const fresh: T[] = [];
    let after: string | undefined;
    for (let page = 0; page < MAX_HISTORY_PAGES; page++) {
      const result = await fetchPage({ after, limit: 100 });
      const seen = await known(result.data.map((item) => item.id));
      const unseen = result.data.filter((item) => !seen.has(item.id));
      fresh.push(...unseen);
      if (unseen.length < result.data.length || !result.hasMore || !result.nextAfter) break;
      after = result.nextAfter;
    }
    return fresh.reverse();
  }
}
