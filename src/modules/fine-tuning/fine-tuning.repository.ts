import type { Scope } from '../../auth/scope';
import type { PrismaClient } from '../../db/database';
import type { Tx } from '../../db/prisma-errors';
import { inScope, scopeSql } from '../../db/scope';
import { Prisma } from '../../generated/prisma/client';
import { isUuid } from '../../validation/parse';
import { finishedJobUsage } from '../usage/job-usage';
import { TERMINAL_STATUSES, type EventLevel, type HostedJob, type JobCheckpoint, type JobEvent } from './fine-tuning.model';
import { jsonOrNull, toCheckpoint, toEvent, toJob, toRowUpdate, type JobUpdate } from './fine-tuning.rows';

/** An event to record; `providerEventId` deduplicates copies of a provider's events. */
export interface EventDraft {
  providerEventId?: string | null;
  level: EventLevel;
  message: string;
  type?: 'message' | 'metrics' | null;
  data?: Prisma.InputJsonValue | null;
  createdAt?: Date;
}

export interface CheckpointDraft {
  providerCheckpointId: string;
  fineTunedModelCheckpoint: string;
  stepNumber: number;
  metrics: Record<string, number>;
  createdAt?: Date;
}

/** What a locked read-modify-write decides to change; events and checkpoints are written with it. */
export interface JobChange {
  data: JobUpdate;
  events?: EventDraft[];
  checkpoints?: CheckpointDraft[];
}

/** What a creation stores; everything else starts from the job's initial state. */
export type NewJob = Pick<
  HostedJob,
  | 'model'
  | 'providerModel'
  | 'provider'
  | 'integrationSlug'
  | 'trainingFileId'
  | 'validationFileId'
  | 'suffix'
  | 'seed'
  | 'method'
  | 'legacyHyperparameters'
  | 'metadata'
  | 'gatewayOptions'
  | 'providerOptions'
>;

export interface RowPage<T> {
  rows: T[];
  hasMore: boolean;
}

const TX_OPTIONS = { maxWait: 20_000, timeout: 20_000 };

/**
 * Fine-tuning rows: jobs, their events and checkpoints, always within one organisation's workspace
 * (the monitor's cross-tenant bookkeeping is in JobLeases).
 */
export class FineTuningRepository {
  constructor(private readonly prisma: PrismaClient) {}

  async findById(scope: Scope, id: string): Promise<HostedJob | null> {
    if (!isUuid(id)) return null;
    const row = await this.prisma.fineTuningJob.findFirst({ where: { ...inScope(scope), id } });
    return row ? toJob(row) : null;
  }

  /** The job of the scope whose `result_files` list the provider file `fileId`. */
  async findByResultFile(scope: Scope, fileId: string): Promise<HostedJob | null> {
    const row = await this.prisma.fineTuningJob.findFirst({ where: { ...inScope(scope), resultFiles: { array_contains: [fileId] } } });
    return row ? toJob(row) : null;
  }

  async findManyByIds(scope: Scope, ids: readonly string[]): Promise<HostedJob[]> {
    const valid = ids.filter(isUuid);
    if (!valid.length) return [];
    return (await this.prisma.fineTuningJob.findMany({ where: { ...inScope(scope), id: { in: valid } } })).map(toJob);
  }

  /** Newest first; `after` is the id of the last job of the previous page (unknown → null). */
  async page(scope: Scope, input: { after?: string; take: number }): Promise<RowPage<HostedJob> | null> {
    let where: Prisma.FineTuningJobWhereInput = inScope(scope);
    if (input.after !== undefined) {
      const cursor = await this.findById(scope, input.after);
      if (!cursor) return null;
      where = { ...where, OR: [{ createdAt: { lt: cursor.createdAt } }, { createdAt: cursor.createdAt, id: { lt: cursor.id } }] };
    }
    const rows = await this.prisma.fineTuningJob.findMany({ where, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: input.take + 1 });
    return { rows: rows.slice(0, input.take).map(toJob), hasMore: rows.length > input.take };
  }

  /**
   * Records a job; null when one of its files is gone. The files' rows are locked (shared) first, so
   * a deletion either waits and then sees this job (FileService: `file_in_use`), or went first and
   * the job is not recorded.
   */
  create(scope: Scope, job: NewJob, event: EventDraft): Promise<HostedJob | null> {
    return this.prisma.$transaction(async (tx) => {
      const fileIds = [...new Set([job.trainingFileId, ...(job.validationFileId ? [job.validationFileId] : [])])];
      const files = await tx.$queryRaw<{ id: string }[]>`
        SELECT id FROM files WHERE ${scopeSql(scope)} AND id IN (${Prisma.join(fileIds.map((id) => Prisma.sql`${id}::uuid`))}) FOR KEY SHARE`;
      if (files.length < fileIds.length) return null;
      const { method, metadata, gatewayOptions, providerOptions, ...plain } = job;
      const row = await tx.fineTuningJob.create({
        data: {
          ...inScope(scope),
          ...plain,
          method: { type: method.type, hyperparameters: { ...method.hyperparameters } },
          hyperparameters: { ...method.hyperparameters },
          metadata: jsonOrNull(metadata),
          gatewayOptions,
          // JSON values of the request, checked against the provider's job options.
          providerOptions: providerOptions as Prisma.InputJsonObject,
          status: 'validating_files',
        },
      });
      await tx.fineTuningJobEvent.create({ data: this.eventData(scope, row.id, event) });
      return toJob(row);
    }, TX_OPTIONS);
  }

  /**
   * Locked read-modify-write of one job: the row is locked (`FOR UPDATE`), `decide` sees its current
   * state and returns the change (or null for none), and the change, its events and checkpoints are
   * committed together. Every status change of a job goes through here, from the API and the monitor.
   */
  async mutate(scope: Scope, id: string, decide: (job: HostedJob) => JobChange | null): Promise<{ job: HostedJob; changed: boolean } | null> {
    if (!isUuid(id)) return null;
    return this.prisma.$transaction(async (tx) => {
      const locked = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM fine_tuning_jobs WHERE id = ${id}::uuid AND ${scopeSql(scope)} FOR UPDATE`;
      if (!locked.length) return null;
      const current = toJob(await tx.fineTuningJob.findFirstOrThrow({ where: { ...inScope(scope), id } }));
      const change = decide(current);
      if (!change) return { job: current, changed: false };
      await tx.fineTuningJob.updateMany({ where: { ...inScope(scope), id }, data: toRowUpdate(change.data) });
      if (change.events?.length) {
        await tx.fineTuningJobEvent.createMany({ data: change.events.map((e) => this.eventData(scope, id, e)), skipDuplicates: true });
      }
      if (change.checkpoints?.length) {
        await tx.fineTuningJobCheckpoint.createMany({ data: change.checkpoints.map((c) => ({ ...inScope(scope), jobId: id, ...c })), skipDuplicates: true });
      }
      const job = toJob(await tx.fineTuningJob.findFirstOrThrow({ where: { ...inScope(scope), id } }));
      const usage = finishedJobUsage(current, job);
      if (usage) await tx.usageRecord.create({ data: usage });
      return { job, changed: true };
    }, TX_OPTIONS);
  }

  /**
   * A job of the scope, not finished, that has yet to upload this gateway file to its provider (and
   * so still needs its bytes); asked by a file's deletion, in its transaction.
   */
  async pendingJobNeeding(tx: Tx, scope: Scope, fileId: string): Promise<HostedJob | null> {
    const row = await tx.fineTuningJob.findFirst({
      where: {
        ...inScope(scope),
        status: { notIn: [...TERMINAL_STATUSES] },
        OR: [
          { trainingFileId: fileId, providerTrainingFileId: null },
          { validationFileId: fileId, providerValidationFileId: null },
        ],
      },
    });
    return row ? toJob(row) : null;
  }

  /** A job's events, newest first; `after` is an event id of the job (unknown → null). */
  async eventsPage(scope: Scope, jobId: string, input: { after?: string; take: number }): Promise<RowPage<JobEvent> | null> {
    let where: Prisma.FineTuningJobEventWhereInput = { ...inScope(scope), jobId };
    if (input.after !== undefined) {
      const cursor = isUuid(input.after) ? await this.prisma.fineTuningJobEvent.findFirst({ where: { ...where, id: input.after } }) : null;
      if (!cursor) return null;
      where = { ...where, seq: { lt: cursor.seq } };
    }
    const rows = await this.prisma.fineTuningJobEvent.findMany({ where, orderBy: { seq: 'desc' }, take: input.take + 1 });
    return { rows: rows.slice(0, input.take).map(toEvent), hasMore: rows.length > input.take };
  }

  /** A job's checkpoints, newest first; `after` is a checkpoint id of the job (unknown → null). */
  async checkpointsPage(scope: Scope, jobId: string, input: { after?: string; take: number }): Promise<RowPage<JobCheckpoint> | null> {
    let where: Prisma.FineTuningJobCheckpointWhereInput = { ...inScope(scope), jobId };
    if (input.after !== undefined) {
      const cursor = isUuid(input.after) ? await this.prisma.fineTuningJobCheckpoint.findFirst({ where: { ...where, id: input.after } }) : null;
      if (!cursor) return null;
      where = { ...where, seq: { lt: cursor.seq } };
    }
    const rows = await this.prisma.fineTuningJobCheckpoint.findMany({ where, orderBy: { seq: 'desc' }, take: input.take + 1 });
    return { rows: rows.slice(0, input.take).map(toCheckpoint), hasMore: rows.length > input.take };
  }

  async eventsByIds(scope: Scope, ids: readonly string[]): Promise<JobEvent[]> {
    const valid = ids.filter(isUuid);
    if (!valid.length) return [];
    return (await this.prisma.fineTuningJobEvent.findMany({ where: { ...inScope(scope), id: { in: valid } } })).map(toEvent);
  }

  async checkpointsByIds(scope: Scope, ids: readonly string[]): Promise<JobCheckpoint[]> {
    const valid = ids.filter(isUuid);
    if (!valid.length) return [];
    return (await this.prisma.fineTuningJobCheckpoint.findMany({ where: { ...inScope(scope), id: { in: valid } } })).map(toCheckpoint);
  }

  /** The newest `perJob` events of each job, in two queries whatever the number of jobs (DataLoader batches). */
  async latestEvents(scope: Scope, jobIds: readonly string[], perJob: number): Promise<JobEvent[]> {
    const ids = await this.latestIds('fine_tuning_job_events', scope, jobIds, perJob);
    if (!ids.length) return [];
    return (await this.prisma.fineTuningJobEvent.findMany({ where: { ...inScope(scope), id: { in: ids } }, orderBy: { seq: 'desc' } })).map(toEvent);
  }

  async latestCheckpoints(scope: Scope, jobIds: readonly string[], perJob: number): Promise<JobCheckpoint[]> {
    const ids = await this.latestIds('fine_tuning_job_checkpoints', scope, jobIds, perJob);
    if (!ids.length) return [];
    return (await this.prisma.fineTuningJobCheckpoint.findMany({ where: { ...inScope(scope), id: { in: ids } }, orderBy: { seq: 'desc' } })).map(toCheckpoint);
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
        WHERE ${scopeSql(scope)} AND job_id IN (${Prisma.join(valid.map((id) => Prisma.sql`${id}::uuid`))})
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
    return new Set(rows.flatMap((r) => (r.providerEventId === null ? [] : [r.providerEventId])));
  }

  async knownProviderCheckpointIds(scope: Scope, jobId: string, providerIds: string[]): Promise<Set<string>> {
    if (!providerIds.length) return new Set();
    const rows = await this.prisma.fineTuningJobCheckpoint.findMany({
      where: { ...inScope(scope), jobId, providerCheckpointId: { in: providerIds } },
      select: { providerCheckpointId: true },
    });
    return new Set(rows.map((r) => r.providerCheckpointId));
  }

  private eventData(scope: Scope, jobId: string, e: EventDraft): Prisma.FineTuningJobEventCreateManyInput {
    return {
      ...inScope(scope),
      jobId,
      providerEventId: e.providerEventId ?? null,
      level: e.level,
      message: e.message,
      type: e.type ?? null,
      data: jsonOrNull(e.data ?? null),
      ...(e.createdAt ? { createdAt: e.createdAt } : {}),
    };
  }
}
