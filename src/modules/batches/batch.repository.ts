import type { Scope } from '../../auth/scope';
import type { PrismaClient } from '../../db/database';
import { inScope } from '../../db/scope';
import type { Prisma } from '../../generated/prisma/client';
import { STATUS_TIME, toBatch, toBatchEvent, type BatchEvent, type BatchStatus, type GatewayBatch } from './batch.model';

export interface NewBatch {
  endpoint: string;
  completionWindow: string;
  inputFileId: string;
  model: string;
  runner: string;
  provider: string;
  integrationSlug: string;
  gatewayOptions: Record<string, string>;
  metadata: Record<string, string> | null;
  apiKeyId: string | null;
  /** Both from one clock reading: `expires_at` is exactly `created_at` + the window, whatever second boundary falls between. */
  createdAt: Date;
  expiresAt: Date;
}

export interface EventDraft {
  level: BatchEvent['level'];
  message: string;
  data?: Prisma.InputJsonObject;
}

/** Columns a status change may set besides the status and its time. */
export type TransitionData = Pick<Prisma.BatchUpdateManyMutationInput, 'outputFileId' | 'errorFileId' | 'errors' | 'requestTotal' | 'nextRunAt'>;

/** Batch rows and their events, always within one organisation's workspace. */
export class BatchRepository {
  constructor(private readonly prisma: PrismaClient) {}

  async findById(scope: Scope, id: string): Promise<GatewayBatch | null> {
    const row = await this.prisma.batch.findFirst({ where: { ...inScope(scope), id } });
    return row ? toBatch(row) : null;
  }

  async findManyByIds(scope: Scope, ids: readonly string[]): Promise<GatewayBatch[]> {
    return (await this.prisma.batch.findMany({ where: { ...inScope(scope), id: { in: [...ids] } } })).map(toBatch);
  }

  /** Newest first; null when the cursor batch is not the scope's. */
  async page(scope: Scope, input: { after?: string; take: number }): Promise<{ items: GatewayBatch[]; hasMore: boolean } | null> {
    let where: Prisma.BatchWhereInput = inScope(scope);
    if (input.after !== undefined) {
      const cursor = await this.findById(scope, input.after);
      if (!cursor) return null;
      where = { ...where, OR: [{ createdAt: { lt: cursor.createdAt } }, { createdAt: cursor.createdAt, id: { lt: cursor.id } }] };
    }
    const rows = await this.prisma.batch.findMany({ where, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: input.take + 1 });
    return { items: rows.slice(0, input.take).map(toBatch), hasMore: rows.length > input.take };
  }

  create(scope: Scope, batch: NewBatch, event: EventDraft): Promise<GatewayBatch> {
    return this.prisma.$transaction(async (tx) => {
      const row = await tx.batch.create({ data: { ...inScope(scope), ...batch, metadata: batch.metadata ?? undefined } });
      await tx.batchEvent.create({ data: { ...inScope(scope), batchId: row.id, ...event } });
      return toBatch(row);
    });
  }

  /**
   * Moves the batch to `to` (stamping its time) when it is in one of `from`, with its event; the
   * batch as it then stands, or null when it was not in `from` (someone else moved it first).
   */
  transition(
    scope: Scope,
    id: string,
    from: readonly BatchStatus[],
    to: BatchStatus,
    event: EventDraft,
    data: TransitionData = {},
  ): Promise<GatewayBatch | null> {
    return this.prisma.$transaction(async (tx) => {
      const time = to in STATUS_TIME ? { [STATUS_TIME[to as keyof typeof STATUS_TIME]]: new Date() } : {};
      const { count } = await tx.batch.updateMany({ where: { ...inScope(scope), id, status: { in: [...from] } }, data: { ...data, ...time, status: to } });
      if (!count) return null;
      await tx.batchEvent.create({ data: { ...inScope(scope), batchId: id, ...event, data: { status: to, ...event.data } } });
      const row = await tx.batch.findFirst({ where: { ...inScope(scope), id } });
      return row && toBatch(row);
    });
  }

  /** The newest events of each batch, newest first. */
  async events(scope: Scope, batchIds: readonly string[], take: number): Promise<Map<string, BatchEvent[]>> {
    const rows = await this.prisma.batchEvent.findMany({ where: { ...inScope(scope), batchId: { in: [...batchIds] } }, orderBy: { seq: 'desc' } });
    const out = new Map<string, BatchEvent[]>();
    for (const row of rows) {
      const list = out.get(row.batchId) ?? [];
      if (list.length < take) list.push(toBatchEvent(row));
      out.set(row.batchId, list);
    }
    return out;
  }
}
