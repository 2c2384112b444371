import type { Scope } from '../../auth/scope';
import type { PrismaClient } from '../../db/database';
import { after, claimDueIds, handBackAll, renewLease, type LeasedTable } from '../../db/leases';
import { inScope, scopeSql } from '../../db/scope';
import { Prisma } from '../../generated/prisma/client';
import type { BatchRequestLine } from './batch-file';
import { toBatch, type GatewayBatch } from './batch.model';

/** An output line (OpenAI's `BatchRequestOutput`) as stored on its request once finished. */
export interface OutputLine {
  id: string;
  custom_id: string;
  response: { status_code: number; request_id: string; body: unknown } | null;
  error: { code: string; message: string } | null;
}

/** What became of one request. */
export interface LineOutcome {
  succeeded: boolean;
  output: OutputLine;
  inputTokens: number;
  outputTokens: number;
}

/** States whose request is done, and in which file it is published. */
export type FinishedState = 'succeeded' | 'failed';

/** The batch runner's leases: on unfinished batches, due at `next_run_at`. */
const BATCHES: LeasedTable = {
  table: 'batches',
  due: 'next_run_at',
  unfinished: Prisma.sql`status IN ('validating', 'in_progress', 'finalizing', 'cancelling')`,
};

type ClaimedRow = { line: number; custom_id: string; body: Record<string, unknown> };

const toLine = (rows: ClaimedRow[]): BatchRequestLine | null => (rows[0] ? { line: rows[0].line, customId: rows[0].custom_id, body: rows[0].body } : null);

/**
 * Marks the next pending request as sent by `owner` and returns it, while the batch is `in_progress`
 * within its window under this owner's lease (not cancelled, expired or taken over).
 */
const claimNext = (scope: Scope, batchId: string, owner: string) => Prisma.sql`
  UPDATE batch_lines SET state = 'running', owner = ${owner}
  WHERE batch_id = ${batchId}::uuid AND ${scopeSql(scope)}
    AND line = (
      SELECT line FROM batch_lines WHERE batch_id = ${batchId}::uuid AND state = 'pending'
      ORDER BY line LIMIT 1 FOR UPDATE SKIP LOCKED
    )
    AND EXISTS (
      SELECT 1 FROM batches WHERE id = ${batchId}::uuid AND status = 'in_progress' AND expires_at > now() AND lease_owner = ${owner}
    )
  RETURNING line, custom_id, body`;

/**
 * The batch runner's bookkeeping: leases on `batches` (as the job monitor's on fine-tuning jobs) and
 * the requests' progress on `batch_lines`. `claimDue` and `handBackAll` span tenants, because the
 * runner serves them all; every other statement carries the batch's scope. A request is claimed
 * (`running`, with the runner's name) before it is sent and finished in one statement with the
 * batch's counts (and the next request claimed) in one statement, so a line costs one statement, and a line found `running` by the next runner was
 * possibly sent: it is failed, never sent again.
 */
export class BatchLines {
  constructor(private readonly prisma: PrismaClient) {}

  /** Claims up to `limit` due, unfinished batches whose lease is free. */
  async claimDue(owner: string, leaseMs: number, limit: number): Promise<GatewayBatch[]> {
    if (limit <= 0) return [];
    const ids = await claimDueIds(this.prisma, BATCHES, owner, leaseMs, limit);
    if (!ids.length) return [];
    const rows = await this.prisma.batch.findMany({ where: { id: { in: ids }, leaseOwner: owner } });
    return rows.map(toBatch);
  }

  renewLease(scope: Scope, id: string, owner: string, leaseMs: number): Promise<boolean> {
    return renewLease(this.prisma, BATCHES, scope, id, owner, leaseMs);
  }

  /** Hands the batch back, due again after `delayMs`. */
  async release(scope: Scope, id: string, owner: string, delayMs: number): Promise<void> {
    await this.prisma.$executeRaw`
      UPDATE batches SET lease_owner = NULL, lease_expires_at = NULL,
        next_run_at = ${after(delayMs)}, updated_at = now()
      WHERE id = ${id}::uuid AND ${scopeSql(scope)} AND lease_owner = ${owner}`;
  }

  /** Every batch `owner` holds, due at once (a shutdown whose steps outlast the grace period). */
  handBackAll(owner: string): Promise<number> {
    return handBackAll(this.prisma, BATCHES, owner);
  }

  /** Records requests read from the input file (again after a crash: those already there are kept). */
  async add(scope: Scope, batchId: string, lines: readonly BatchRequestLine[]): Promise<void> {
    await this.prisma.batchLine.createMany({
      data: lines.map((l) => ({ ...inScope(scope), batchId, line: l.line, customId: l.customId, body: l.body as Prisma.InputJsonObject })),
      skipDuplicates: true,
    });
  }

  /** Sets the batch's `request_total` to its recorded requests, whatever its status (a cancel may have overtaken the load); the total. */
  async recordTotal(scope: Scope, batchId: string): Promise<number> {
    const rows = await this.prisma.$queryRaw<{ total: number }[]>`
      UPDATE batches SET request_total = (SELECT count(*)::integer FROM batch_lines WHERE batch_id = ${batchId}::uuid AND ${scopeSql(scope)})
      WHERE id = ${batchId}::uuid AND ${scopeSql(scope)}
      RETURNING request_total AS total`;
    return Number(rows[0]?.total ?? 0);
  }

  count(scope: Scope, batchId: string, state?: string): Promise<number> {
    return this.prisma.batchLine.count({ where: { ...inScope(scope), batchId, ...(state ? { state } : {}) } });
  }

  /** The next pending request, marked as sent by `owner` (claimNext); null when none is left or the batch stopped. */
  async claim(scope: Scope, batchId: string, owner: string): Promise<BatchRequestLine | null> {
    return toLine(await this.prisma.$queryRaw<ClaimedRow[]>`${claimNext(scope, batchId, owner)}`);
  }

  /**
   * Finishes a request this owner sent and counts it on the batch; with `next`, claims the next
   * request too (as `claim`), in the same statement. The request claimed, or null.
   */
  async finish(scope: Scope, batchId: string, line: number, owner: string, outcome: LineOutcome, next: boolean): Promise<BatchRequestLine | null> {
    const state: FinishedState = outcome.succeeded ? 'succeeded' : 'failed';
    const claimed = next
      ? Prisma.sql`, claimed AS (${claimNext(scope, batchId, owner)}) SELECT line, custom_id, body FROM claimed`
      : Prisma.sql` SELECT 1 WHERE false`;
    const rows = await this.prisma.$queryRaw<ClaimedRow[]>`
      WITH done AS (
        UPDATE batch_lines SET state = ${state}, result = ${JSON.stringify(outcome.output)}::jsonb
        WHERE batch_id = ${batchId}::uuid AND line = ${line}::integer AND ${scopeSql(scope)} AND state = 'running' AND owner = ${owner}
        RETURNING 1
      ), n AS (SELECT count(*)::integer AS c FROM done),
      counted AS (
        UPDATE batches SET
          request_completed = request_completed + CASE WHEN ${outcome.succeeded}::boolean THEN (SELECT c FROM n) ELSE 0 END,
          request_failed = request_failed + CASE WHEN ${outcome.succeeded}::boolean THEN 0 ELSE (SELECT c FROM n) END,
          input_tokens = input_tokens + ${outcome.inputTokens}::bigint * (SELECT c FROM n),
          output_tokens = output_tokens + ${outcome.outputTokens}::bigint * (SELECT c FROM n)
        WHERE id = ${batchId}::uuid AND ${scopeSql(scope)}
      )${claimed}`;
    return toLine(rows);
  }

  /** Puts a request this owner claimed but never got an answer for (a 429) back, unsent. */
  async giveBack(scope: Scope, batchId: string, line: number, owner: string): Promise<void> {
    await this.prisma.$executeRaw`
      UPDATE batch_lines SET state = 'pending', owner = NULL
      WHERE batch_id = ${batchId}::uuid AND line = ${line}::integer AND ${scopeSql(scope)} AND state = 'running' AND owner = ${owner}`;
  }

  /** Fails every request in `state` with `error` (for the error file), counted on the batch; how many. */
  async failAll(scope: Scope, batchId: string, state: 'pending' | 'running', error: { code: string; message: string }): Promise<number> {
    const rows = await this.prisma.$queryRaw<{ c: number }[]>`
      WITH closed AS (
        UPDATE batch_lines SET state = 'failed', result = jsonb_build_object(
          'id', 'batch_req_' || substr(md5(batch_id::text || ':' || line::text), 1, 24), 'custom_id', custom_id,
          'response', NULL, 'error', jsonb_build_object('code', ${error.code}::text, 'message', ${error.message}::text))
        WHERE batch_id = ${batchId}::uuid AND ${scopeSql(scope)} AND state = ${state}
        RETURNING 1
      ), n AS (SELECT count(*)::integer AS c FROM closed),
      counted AS (UPDATE batches SET request_failed = request_failed + (SELECT c FROM n) WHERE id = ${batchId}::uuid AND ${scopeSql(scope)})
      SELECT c FROM n`;
    return Number(rows[0]?.c ?? 0);
  }

  /** Finished requests in `state`, in line order, after `afterLine`. */
  async page(scope: Scope, batchId: string, state: FinishedState, afterLine: number, take: number): Promise<{ line: number; output: OutputLine }[]> {
    const rows = await this.prisma.batchLine.findMany({
      where: { ...inScope(scope), batchId, state, line: { gt: afterLine } },
      orderBy: { line: 'asc' },
      take,
      select: { line: true, result: true },
    });
    return rows.map((r) => ({ line: r.line, output: r.result as unknown as OutputLine }));
  }
}
