import type { Scope } from '../../auth/scope';
import type { PrismaClient } from '../../db/database';
import { after, claimDueIds, handBackAll, renewLease, type LeasedTable } from '../../db/leases';
import { inScope, scopeSql } from '../../db/scope';
import { Prisma } from '../../generated/prisma/client';
import type { HostedJob, RetryError } from './fine-tuning.model';
import { toJob } from './fine-tuning.rows';

/** The job monitor's leases: on jobs not finished or with a cancel the provider has not confirmed, due at `next_poll_at`. */
const JOBS: LeasedTable = {
  table: 'fine_tuning_jobs',
  due: 'next_poll_at',
  unfinished: Prisma.sql`(status NOT IN ('succeeded', 'failed', 'cancelled') OR provider_cancel_pending)`,
};

/** How the monitor hands a job back: when it is due again, and its back-off counters. */
export interface Release {
  delayMs: number;
  idlePolls: number;
  /** Failed steps in a row; 0 (a step that worked) clears what `retry` stored. */
  failedAttempts: number;
  clearCancelPending?: boolean;
  /** The failure being retried and when a job not yet submitted gives up; absent: left as stored. */
  retry?: { error: RetryError; giveUpAt: Date | null };
}

/**
 * The job monitor's bookkeeping on `fine_tuning_jobs`: claiming due jobs with a lease, renewing and
 * releasing it, and the writes that must hold the lease. `claimDue` is the one query that spans
 * tenants, because the monitor serves them all; every write after it carries the job's scope. Times
 * come from the database's clock (`now()`), so several gateway processes agree on when a lease
 * expires and when a job is due.
 */
export class JobLeases {
  constructor(private readonly prisma: PrismaClient) {}

  /** Jobs by status across every tenant, for /metrics (an operator's view, like `claimDue`). */
  async countByStatus(): Promise<Array<{ status: string; count: number }>> {
    const rows = await this.prisma.fineTuningJob.groupBy({ by: ['status'], _count: { _all: true } });
    return rows.map((r) => ({ status: r.status, count: r._count._all }));
  }

  /** Claims up to `limit` due jobs for `owner`: not finished (or with a cancel the provider has not confirmed), due, lease free. */
  async claimDue(owner: string, leaseMs: number, limit: number): Promise<HostedJob[]> {
    const ids = await claimDueIds(this.prisma, JOBS, owner, leaseMs, limit);
    if (!ids.length) return [];
    return (await this.prisma.fineTuningJob.findMany({ where: { id: { in: ids }, leaseOwner: owner } })).map(toJob);
  }

  /** Extends the lease while a long step (an upload) runs; false when the lease was lost. */
  renewLease(scope: Scope, id: string, owner: string, leaseMs: number): Promise<boolean> {
    return renewLease(this.prisma, JOBS, scope, id, owner, leaseMs);
  }

  /**
   * The last check before a create call reaches the provider: the lease is still ours (renewed), the
   * job is not finished or cancelled and has no provider job yet; the attempt is counted first, so a
   * process that resumes the job after a crash knows to look for a job already created.
   */
  async beginSubmit(scope: Scope, id: string, owner: string, leaseMs: number): Promise<boolean> {
    const count = await this.prisma.$executeRaw`
      UPDATE fine_tuning_jobs
      SET submit_attempts = submit_attempts + 1, lease_expires_at = ${after(leaseMs)},
          updated_at = now()
      WHERE id = ${id}::uuid AND ${scopeSql(scope)}
        AND lease_owner = ${owner} AND provider_job_id IS NULL
        AND status NOT IN ('succeeded', 'failed', 'cancelled') AND NOT provider_cancel_pending`;
    return count > 0;
  }

  /** Stores provider file ids as soon as they are known (only ever filling empty columns). */
  async saveProviderFile(scope: Scope, id: string, which: 'training' | 'validation', providerFileId: string): Promise<void> {
    const data = which === 'training' ? { providerTrainingFileId: providerFileId } : { providerValidationFileId: providerFileId };
    const empty = which === 'training' ? { providerTrainingFileId: null } : { providerValidationFileId: null };
    await this.prisma.fineTuningJob.updateMany({ where: { ...inScope(scope), id, ...empty }, data });
  }

  /**
   * Stores the provider job id the moment it is known — whatever the lease or status, since it is a
   * fact about the provider — and returns the row, so the caller sees a cancel that arrived meanwhile.
   */
  async saveProviderJobId(scope: Scope, id: string, providerJobId: string): Promise<HostedJob | null> {
    await this.prisma.fineTuningJob.updateMany({ where: { ...inScope(scope), id, providerJobId: null }, data: { providerJobId } });
    const row = await this.prisma.fineTuningJob.findFirst({ where: { ...inScope(scope), id } });
    return row ? toJob(row) : null;
  }

  /** Hands the job back: due again after `delayMs` (database clock), with the back-off counters and what is being retried. */
  async release(scope: Scope, id: string, owner: string, next: Release): Promise<void> {
    const retrying = next.failedAttempts > 0;
    const setRetry = retrying && next.retry !== undefined;
    await this.prisma.$executeRaw`
      UPDATE fine_tuning_jobs
      SET lease_owner = NULL, lease_expires_at = NULL,
          next_poll_at = ${after(next.delayMs)},
          idle_polls = ${next.idlePolls}::integer, failed_attempts = ${next.failedAttempts}::integer,
          provider_cancel_pending = CASE WHEN ${next.clearCancelPending ?? false}::boolean THEN false ELSE provider_cancel_pending END,
          retry_error = CASE WHEN ${setRetry}::boolean THEN ${setRetry ? JSON.stringify(next.retry?.error) : null}::jsonb
                             WHEN ${retrying}::boolean THEN retry_error END,
          give_up_at = CASE WHEN ${setRetry}::boolean THEN ${next.retry?.giveUpAt ?? null}::timestamptz
                            WHEN ${retrying}::boolean THEN give_up_at END,
          updated_at = now()
      WHERE id = ${id}::uuid AND ${scopeSql(scope)}
        AND lease_owner = ${owner}`;
  }

  /**
   * Hands back every job `owner` still holds, due at once (graceful shutdown with steps still running).
   * Like `claimDue` it spans tenants: the owner id is unique to one monitor of one process.
   */
  handBackAll(owner: string): Promise<number> {
    return handBackAll(this.prisma, JOBS, owner);
  }
}
