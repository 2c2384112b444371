import type { Scope } from '../../auth/scope';
import type { PrismaClient } from '../../db/database';
import { Prisma, type FineTuningJob, type FineTuningJobCheckpoint, type FineTuningJobEvent } from '../../generated/prisma/client';
import { isUuid } from '../../validation/parse';

const inScope = (scope: Scope) => ({ organisationId: scope.organisationId, workspaceId: scope.workspaceId });

export const TERMINAL_STATUSES = ['succeeded', 'failed', 'cancelled'] as const;

/** An event to record; `providerEventId` deduplicates copies of a provider's events. */
export interface EventDraft {
  providerEventId?: string | null;
  level: string;
  message: string;
  type?: string | null;
  data?: Prisma.InputJsonValue | null;
  createdAt?: Date;
}

export interface CheckpointDraft {
  providerCheckpointId: string;
  fineTunedModelCheckpoint: string;
  stepNumber: number;
  metrics: Prisma.InputJsonValue;
  createdAt?: Date;
}

/** What a locked read-modify-write decides to change; events and checkpoints are written with it. */
export interface JobChange {
  data: Prisma.FineTuningJobUncheckedUpdateManyInput;
  events?: EventDraft[];
  checkpoints?: CheckpointDraft[];
}

export interface CreateJobRow {
  model: string;
  providerModel: string | null;
  provider: string;
  integrationSlug: string;
  trainingFileId: string;
  validationFileId: string | null;
  suffix: string | null;
  seed: number | null;
  method: Prisma.InputJsonValue | null;
  hyperparameters: Prisma.InputJsonValue;
  legacyHyperparameters: boolean;
  metadata: Prisma.InputJsonValue | null;
  gatewayOptions: Prisma.InputJsonValue;
  providerOptions: Prisma.InputJsonValue;
}

const TX_OPTIONS = { maxWait: 20_000, timeout: 20_000 };

/**
 * Fine-tuning rows: jobs, their events and checkpoints, always within one organisation's workspace.
 * The monitor's bookkeeping (claim, lease, release) is here too: `claimDue` is the one query that
 * spans tenants, because the monitor serves them all; every write after it carries the job's scope.
 */
export class FineTuningRepository {
  constructor(private readonly prisma: PrismaClient) {}

  findById(scope: Scope, id: string): Promise<FineTuningJob | null> {
    if (!isUuid(id)) return Promise.resolve(null);
    return this.prisma.fineTuningJob.findFirst({ where: { ...inScope(scope), id } });
  }

  findManyByIds(scope: Scope, ids: readonly string[]): Promise<FineTuningJob[]> {
    const valid = ids.filter(isUuid);
    if (!valid.length) return Promise.resolve([]);
    return this.prisma.fineTuningJob.findMany({ where: { ...inScope(scope), id: { in: valid } } });
  }

  /** Newest first; `after` is the id of the last job of the previous page (unknown → null). */
  async page(scope: Scope, input: { after?: string; take: number }): Promise<{ rows: FineTuningJob[]; hasMore: boolean } | null> {
    let where: Prisma.FineTuningJobWhereInput = inScope(scope);
    if (input.after !== undefined) {
      const cursor = await this.findById(scope, input.after);
      if (!cursor) return null;
      where = { ...where, OR: [{ createdAt: { lt: cursor.createdAt } }, { createdAt: cursor.createdAt, id: { lt: cursor.id } }] };
    }
    const rows = await this.prisma.fineTuningJob.findMany({ where, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: input.take + 1 });
    return { rows: rows.slice(0, input.take), hasMore: rows.length > input.take };
  }

  create(scope: Scope, data: CreateJobRow, event: EventDraft): Promise<FineTuningJob> {
    return this.prisma.$transaction(async (tx) => {
      const job = await tx.fineTuningJob.create({
        data: {
          ...inScope(scope),
          ...data,
          method: data.method ?? Prisma.DbNull,
          metadata: data.metadata ?? Prisma.DbNull,
          status: 'validating_files',
        },
      });
      await tx.fineTuningJobEvent.create({ data: this.eventData(scope, job.id, event) });
      return job;
    }, TX_OPTIONS);
  }

  /**
   * Locked read-modify-write of one job: the row is locked (`FOR UPDATE`), `decide` sees its current
   * state and returns the change (or null for none), and the change, its events and checkpoints are
   * committed together. Every status change of a job goes through here, from the API and the monitor.
   */
  async mutate(scope: Scope, id: string, decide: (job: FineTuningJob) => JobChange | null): Promise<{ job: FineTuningJob; changed: boolean } | null> {
    if (!isUuid(id)) return null;
    return this.prisma.$transaction(async (tx) => {
      const locked = await tx.$queryRaw<{ id: string }[]>`
        SELECT id FROM fine_tuning_jobs
        WHERE id = ${id}::uuid AND organisation_id = ${scope.organisationId}::uuid AND workspace_id = ${scope.workspaceId}::uuid
        FOR UPDATE`;
      if (!locked.length) return null;
      const current = await tx.fineTuningJob.findFirstOrThrow({ where: { ...inScope(scope), id } });
      const change = decide(current);
      if (!change) return { job: current, changed: false };
      await tx.fineTuningJob.updateMany({ where: { ...inScope(scope), id }, data: change.data });
      if (change.events?.length) {
        await tx.fineTuningJobEvent.createMany({ data: change.events.map((e) => this.eventData(scope, id, e)), skipDuplicates: true });
      }
      if (change.checkpoints?.length) {
        await tx.fineTuningJobCheckpoint.createMany({
          data: change.checkpoints.map((c) => ({ ...inScope(scope), jobId: id, ...c })),
          skipDuplicates: true,
        });
      }
      const job = await tx.fineTuningJob.findFirstOrThrow({ where: { ...inScope(scope), id } });
      return { job, changed: true };
    }, TX_OPTIONS);
  }

  /** A job's events, newest first; `after` is an event id of the job (unknown → null). */
  async eventsPage(scope: Scope, jobId: string, input: { after?: string; take: number }): Promise<{ rows: FineTuningJobEvent[]; hasMore: boolean } | null> {
    let where: Prisma.FineTuningJobEventWhereInput = { ...inScope(scope), jobId };
    if (input.after !== undefined) {
      const cursor = isUuid(input.after) ? await this.prisma.fineTuningJobEvent.findFirst({ where: { ...where, id: input.after } }) : null;
      if (!cursor) return null;
      where = { ...where, seq: { lt: cursor.seq } };
    }
    const rows = await this.prisma.fineTuningJobEvent.findMany({ where, orderBy: { seq: 'desc' }, take: input.take + 1 });
    return { rows: rows.slice(0, input.take), hasMore: rows.length > input.take };
  }

  /** A job's checkpoints, newest first; `after` is a checkpoint id of the job (unknown → null). */
  async checkpointsPage(scope: Scope, jobId: string, input: { after?: string; take: number }): Promise<{ rows: FineTuningJobCheckpoint[]; hasMore: boolean } | null> {
    let where: Prisma.FineTuningJobCheckpointWhereInput = { ...inScope(scope), jobId };
    if (input.after !== undefined) {
      const cursor = isUuid(input.after) ? await this.prisma.fineTuningJobCheckpoint.findFirst({ where: { ...where, id: input.after } }) : null;
      if (!cursor) return null;
      where = { ...where, seq: { lt: cursor.seq } };
    }
    const rows = await this.prisma.fineTuningJobCheckpoint.findMany({ where, orderBy: { seq: 'desc' }, take: input.take + 1 });
    return { rows: rows.slice(0, input.take), hasMore: rows.length > input.take };
  }

  eventsByIds(scope: Scope, ids: readonly string[]): Promise<FineTuningJobEvent[]> {
    const valid = ids.filter(isUuid);
    if (!valid.length) return Promise.resolve([]);
    return this.prisma.fineTuningJobEvent.findMany({ where: { ...inScope(scope), id: { in: valid } } });
  }

  checkpointsByIds(scope: Scope, ids: readonly string[]): Promise<FineTuningJobCheckpoint[]> {
    const valid = ids.filter(isUuid);
    if (!valid.length) return Promise.resolve([]);
    return this.prisma.fineTuningJobCheckpoint.findMany({ where: { ...inScope(scope), id: { in: valid } } });
  }

  /** The newest `perJob` events of each job, in two queries whatever the number of jobs (DataLoader batches). */
  async latestEvents(scope: Scope, jobIds: readonly string[], perJob: number): Promise<FineTuningJobEvent[]> {
    const ids = await this.latestIds('fine_tuning_job_events', scope, jobIds, perJob);
    if (!ids.length) return [];
    return this.prisma.fineTuningJobEvent.findMany({ where: { ...inScope(scope), id: { in: ids } }, orderBy: { seq: 'desc' } });
  }

  async latestCheckpoints(scope: Scope, jobIds: readonly string[], perJob: number): Promise<FineTuningJobCheckpoint[]> {
    const ids = await this.latestIds('fine_tuning_job_checkpoints', scope, jobIds, perJob);
    if (!ids.length) return [];
    return this.prisma.fineTuningJobCheckpoint.findMany({ where: { ...inScope(scope), id: { in: ids } }, orderBy: { seq: 'desc' } });
  }

  private async latestIds(
    table: 'fine_tuning_job_events' | 'fine_tuning_job_checkpoints',
    scope: Scope,
    jobIds: readonly string[],
    perJob: number,
  ): Promise<string[]> {
    const valid = [...new Set(jobIds.filter(isUuid))];
    if (!valid.length) return [];
    const rows = await this.prisma.$queryRaw<{ id: string }[]>`
      SELECT id FROM (
        SELECT id, row_number() OVER (PARTITION BY job_id ORDER BY seq DESC) AS rank
        FROM ${Prisma.raw(table)}
        WHERE organisation_id = ${scope.organisationId}::uuid AND workspace_id = ${scope.workspaceId}::uuid
          AND job_id IN (${Prisma.join(valid.map((id) => Prisma.sql`${id}::uuid`))})
      ) ranked
      WHERE rank <= ${perJob}`;
    return rows.map((r) => String(r.id));
  }

  /** Which of these provider event ids the job already has. */
  async knownProviderEventIds(scope: Scope, jobId: string, providerIds: string[]): Promise<Set<string>> {
    if (!providerIds.length) return new Set();
    const rows = await this.prisma.fineTuningJobEvent.findMany({
      where: { ...inScope(scope), jobId, providerEventId: { in: providerIds } },
      select: { providerEventId: true },
    });
    return new Set(rows.map((r) => r.providerEventId!));
  }

  async knownProviderCheckpointIds(scope: Scope, jobId: string, providerIds: string[]): Promise<Set<string>> {
    if (!providerIds.length) return new Set();
    const rows = await this.prisma.fineTuningJobCheckpoint.findMany({
      where: { ...inScope(scope), jobId, providerCheckpointId: { in: providerIds } },
      select: { providerCheckpointId: true },
    });
    return new Set(rows.map((r) => r.providerCheckpointId));
  }

  // ---- The job monitor's bookkeeping. Times come from the database's clock (`now()`), so several
  // ---- gateway processes agree on when a lease expires and when a job is due.

  /**
   * Claims up to `limit` due jobs for `owner`: not finished (or with a cancel the provider has not
   * confirmed), due, and not leased by a live owner. `SKIP LOCKED` lets several processes claim at
   * once without waiting on, or taking, each other's rows.
   */
  async claimDue(owner: string, leaseMs: number, limit: number): Promise<FineTuningJob[]> {
    const claimed = await this.prisma.$queryRaw<{ id: string }[]>`
      UPDATE fine_tuning_jobs
      SET lease_owner = ${owner}, lease_expires_at = now() + make_interval(secs => ${leaseMs / 1000}::double precision)
      WHERE id IN (
        SELECT id FROM fine_tuning_jobs
        WHERE (status NOT IN ('succeeded', 'failed', 'cancelled') OR provider_cancel_pending)
          AND next_poll_at <= now()
          AND (lease_expires_at IS NULL OR lease_expires_at < now())
        ORDER BY next_poll_at
        LIMIT ${limit}::integer
        FOR UPDATE SKIP LOCKED
      )
      RETURNING id`;
    if (!claimed.length) return [];
    return this.prisma.fineTuningJob.findMany({ where: { id: { in: claimed.map((r) => String(r.id)) }, leaseOwner: owner } });
  }

  /** Extends the lease while a long step (an upload) runs; false when the lease was lost. */
  async renewLease(scope: Scope, id: string, owner: string, leaseMs: number): Promise<boolean> {
    const count = await this.prisma.$executeRaw`
      UPDATE fine_tuning_jobs SET lease_expires_at = now() + make_interval(secs => ${leaseMs / 1000}::double precision)
      WHERE id = ${id}::uuid AND organisation_id = ${scope.organisationId}::uuid AND workspace_id = ${scope.workspaceId}::uuid
        AND lease_owner = ${owner}`;
    return count > 0;
  }

  /**
   * The last check before a create call reaches the provider: the lease is still ours (renewed), the
   * job is not finished or cancelled and has no provider job yet; the attempt is counted first, so a
   * process that resumes the job after a crash knows to look for a job already created.
   */
  async beginSubmit(scope: Scope, id: string, owner: string, leaseMs: number): Promise<boolean> {
    const count = await this.prisma.$executeRaw`
      UPDATE fine_tuning_jobs
      SET submit_attempts = submit_attempts + 1, lease_expires_at = now() + make_interval(secs => ${leaseMs / 1000}::double precision),
          updated_at = now()
      WHERE id = ${id}::uuid AND organisation_id = ${scope.organisationId}::uuid AND workspace_id = ${scope.workspaceId}::uuid
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
  async saveProviderJobId(scope: Scope, id: string, providerJobId: string): Promise<FineTuningJob | null> {
    await this.prisma.fineTuningJob.updateMany({ where: { ...inScope(scope), id, providerJobId: null }, data: { providerJobId } });
    return this.prisma.fineTuningJob.findFirst({ where: { ...inScope(scope), id } });
  }

  /** Hands the job back: due again after `delayMs` (database clock), with the back-off counters. */
  async release(
    scope: Scope,
    id: string,
    owner: string,
    next: { delayMs: number; idlePolls: number; failedAttempts: number; clearCancelPending?: boolean },
  ): Promise<void> {
    await this.prisma.$executeRaw`
      UPDATE fine_tuning_jobs
      SET lease_owner = NULL, lease_expires_at = NULL,
          next_poll_at = now() + make_interval(secs => ${next.delayMs / 1000}::double precision),
          idle_polls = ${next.idlePolls}::integer, failed_attempts = ${next.failedAttempts}::integer,
          provider_cancel_pending = CASE WHEN ${next.clearCancelPending ?? false}::boolean THEN false ELSE provider_cancel_pending END,
          updated_at = now()
      WHERE id = ${id}::uuid AND organisation_id = ${scope.organisationId}::uuid AND workspace_id = ${scope.workspaceId}::uuid
        AND lease_owner = ${owner}`;
  }

  private eventData(scope: Scope, jobId: string, e: EventDraft): Prisma.FineTuningJobEventCreateManyInput {
    return {
      ...inScope(scope),
      jobId,
      providerEventId: e.providerEventId ?? null,
      level: e.level,
      message: e.message,
      type: e.type ?? null,
      data: e.data ?? Prisma.DbNull,
      ...(e.createdAt ? { createdAt: e.createdAt } : {}),
    };
  }
}
