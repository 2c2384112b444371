import type { Scope } from '../../auth/scope';
import type { PrismaClient } from '../../db/database';
import { scopeSql } from '../../db/scope';
import type { BatchRequest, BatchResultLine, ProviderBatchCounts } from '../../providers/batch';
import { batchResultUsage, type BatchCallFacts } from '../usage/batch-usage';
import { insertUsageRows } from '../usage/usage.repository';

/** Results recorded per statement while a provider's output is read. */
const RECORD_CHUNK = 500;
/** A chunk's transaction may wait behind others on a busy database (Prisma's defaults: 2 s, 5 s). */
const TX_OPTIONS = { maxWait: 20_000, timeout: 20_000 };

/**
 * The provider runner's bookkeeping on `batches` and `batch_lines`, always within the batch's scope:
 * the provider's input reference and job handle (each stored once, the moment it exists), the create
 * attempts, the results of the provider's output by `custom_id`, and the counts recomputed from them.
 */
export class ProviderBatchRecords {
  constructor(private readonly prisma: PrismaClient) {}

  /** The batch's requests in file order, `take` per query (what is uploaded to the provider). */
  async *requests(scope: Scope, batchId: string, take = 1000): AsyncGenerator<BatchRequest> {
    for (let after = 0; ;) {
      const rows = await this.prisma.batchLine.findMany({
        where: { organisationId: scope.organisationId, workspaceId: scope.workspaceId, batchId, line: { gt: after } },
        orderBy: { line: 'asc' },
        take,
        select: { line: true, customId: true, body: true },
      });
      for (const row of rows) yield { customId: row.customId, body: row.body as Record<string, unknown> };
      if (rows.length < take) return;
      after = rows[rows.length - 1].line;
    }
  }

  async saveInput(scope: Scope, batchId: string, input: string): Promise<void> {
    await this.prisma.$executeRaw`
      UPDATE batches SET provider_input_file = ${input} WHERE id = ${batchId}::uuid AND ${scopeSql(scope)} AND provider_input_file IS NULL`;
  }

  /**
   * Counts a create attempt before it is made, while the batch is still `validating` under this
   * owner's lease; false when it is not (cancelled meanwhile, lease lost): nothing is created then.
   */
  async beginSubmit(scope: Scope, batchId: string, owner: string): Promise<boolean> {
    const count = await this.prisma.$executeRaw`
      UPDATE batches SET submit_attempts = submit_attempts + 1
      WHERE id = ${batchId}::uuid AND ${scopeSql(scope)} AND status = 'validating' AND lease_owner = ${owner} AND provider_batch_id IS NULL`;
    return count > 0;
  }

  /** Stores the provider's job handle unless one is stored already; the handle the batch keeps. */
  async saveJob(scope: Scope, batchId: string, providerBatchId: string): Promise<string | null> {
    await this.prisma.$executeRaw`
      UPDATE batches SET provider_batch_id = ${providerBatchId} WHERE id = ${batchId}::uuid AND ${scopeSql(scope)} AND provider_batch_id IS NULL`;
    const rows = await this.prisma.$queryRaw<{ provider_batch_id: string | null }[]>`
      SELECT provider_batch_id FROM batches WHERE id = ${batchId}::uuid AND ${scopeSql(scope)}`;
    return rows[0]?.provider_batch_id ?? null;
  }

  /** The provider's progress while it runs (its own counts, until the output is read). */
  async setCounts(scope: Scope, batchId: string, counts: ProviderBatchCounts): Promise<void> {
    await this.prisma.$executeRaw`
      UPDATE batches SET request_completed = ${counts.completed}::integer, request_failed = ${counts.failed}::integer
      WHERE id = ${batchId}::uuid AND ${scopeSql(scope)}`;
  }

  /**
   * Records result lines on their requests by `custom_id` (requests already recorded are kept, so
   * reading the output again after a crash changes nothing) and, with `usage`, the lines recorded in
   * the usage ledger in the same transaction (so each is counted once); how many matched no pending request.
   */
  async record(scope: Scope, batchId: string, results: AsyncIterable<BatchResultLine>, usage: BatchCallFacts | null): Promise<number> {
    let unmatched = 0;
    let chunk: BatchResultLine[] = [];
    const flush = async () => {
      if (chunk.length) unmatched += chunk.length - (await this.recordChunk(scope, batchId, chunk, usage));
      chunk = [];
    };
    for await (const result of results) {
      chunk.push(result);
      if (chunk.length >= RECORD_CHUNK) await flush();
    }
    await flush();
    return unmatched;
  }

  private recordChunk(scope: Scope, batchId: string, results: readonly BatchResultLine[], usage: BatchCallFacts | null): Promise<number> {
    const rows = results.map((r) => ({ custom_id: r.custom_id, state: isSuccess(r) ? 'succeeded' : 'failed', result: r }));
    return this.prisma.$transaction(async (tx) => {
      const recorded = await tx.$queryRaw<{ custom_id: string }[]>`
        UPDATE batch_lines AS l SET state = r.state, result = r.result
        FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS r(custom_id text, state text, result jsonb)
        WHERE l.batch_id = ${batchId}::uuid AND l.organisation_id = ${scope.organisationId}::uuid
          AND l.workspace_id = ${scope.workspaceId}::uuid AND l.custom_id = r.custom_id AND l.state = 'pending'
        RETURNING l.custom_id`;
      if (usage) {
        const ids = new Set(recorded.map((r) => r.custom_id));
        // Each recorded request once, even were the provider to repeat its line.
        await insertUsageRows(
          tx,
          batchResultUsage(
            usage,
            results.filter((r) => ids.delete(r.custom_id)),
          ),
        );
      }
      return recorded.length;
    }, TX_OPTIONS);
  }

  /**
   * The batch's counts and token usage recomputed from its recorded requests (one statement,
   * repeatable); the total too, which the submission's own record misses when a cancel overtook it.
   */
  async settle(scope: Scope, batchId: string): Promise<void> {
    await this.prisma.$executeRaw`
      WITH t AS (
        SELECT
          count(*)::integer AS total,
          count(*) FILTER (WHERE state = 'succeeded')::integer AS completed,
          count(*) FILTER (WHERE state = 'failed')::integer AS failed,
          coalesce(sum((result #>> '{response,body,usage,prompt_tokens}')::bigint) FILTER (WHERE state = 'succeeded'), 0)::bigint AS input,
          coalesce(sum((result #>> '{response,body,usage,completion_tokens}')::bigint) FILTER (WHERE state = 'succeeded'), 0)::bigint AS output
        FROM batch_lines WHERE batch_id = ${batchId}::uuid AND ${scopeSql(scope)}
      )
      UPDATE batches SET request_total = t.total, request_completed = t.completed, request_failed = t.failed, input_tokens = t.input, output_tokens = t.output
      FROM t WHERE id = ${batchId}::uuid AND ${scopeSql(scope)}`;
  }
}

/** A result is a success when the provider answered 2xx without an error. */
const isSuccess = (r: BatchResultLine) => r.error === null && r.response !== null && r.response.status_code >= 200 && r.response.status_code < 300;
