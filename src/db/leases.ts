import type { Scope } from '../auth/scope';
import type { PrismaClient } from './database';
import { Prisma } from '../generated/prisma/client';
import { scopeSql } from './scope';

/**
 * A table whose rows gateway processes work on under a lease (`lease_owner`, `lease_expires_at`) and a
 * due time: the job monitor's `fine_tuning_jobs` and the batch runner's `batches`. Times come from the
 * database's clock (`now()`), so several processes agree on when a lease has run out.
 */
export interface LeasedTable {
  /** Table and due column: constants of the code, never input (they are spliced in as identifiers). */
  readonly table: 'batches' | 'fine_tuning_jobs';
  readonly due: 'next_run_at' | 'next_poll_at';
  /** Which rows still have work to do. */
  readonly unfinished: Prisma.Sql;
}

/** `now()` plus `ms`, on the database's clock. */
export const after = (ms: number) => Prisma.sql`now() + make_interval(secs => ${ms / 1000}::double precision)`;

/**
 * Claims up to `limit` due, unfinished rows whose lease is free for `owner`; their ids. `SKIP LOCKED`
 * lets several processes claim at once without waiting on, or taking, each other's rows. It spans
 * tenants: the owner id is unique to one runner of one process.
 */
export async function claimDueIds(prisma: PrismaClient, t: LeasedTable, owner: string, leaseMs: number, limit: number): Promise<string[]> {
  const table = Prisma.raw(t.table);
  const due = Prisma.raw(t.due);
  const claimed = await prisma.$queryRaw<{ id: string }[]>`
    UPDATE ${table}
    SET lease_owner = ${owner}, lease_expires_at = ${after(leaseMs)}
    WHERE id IN (
      SELECT id FROM ${table}
      WHERE ${t.unfinished}
        AND ${due} <= now()
        AND (lease_expires_at IS NULL OR lease_expires_at < now())
      ORDER BY ${due}
      LIMIT ${limit}::integer
      FOR UPDATE SKIP LOCKED
    )
    RETURNING id`;
  return claimed.map((r) => String(r.id));
}

/** Extends `owner`'s lease on one row while a long step runs; false when the lease was lost. */
export async function renewLease(prisma: PrismaClient, t: LeasedTable, scope: Scope, id: string, owner: string, leaseMs: number): Promise<boolean> {
  const count = await prisma.$executeRaw`
    UPDATE ${Prisma.raw(t.table)} SET lease_expires_at = ${after(leaseMs)}
    WHERE id = ${id}::uuid AND ${scopeSql(scope)} AND lease_owner = ${owner}`;
  return count > 0;
}

/**
 * Keeps a lease while a long step runs: `renew` (renewLease for the row) every third of the lease. A
 * renewal that fails (the database away) is tried again at the next beat; one that finds the lease gone
 * (another process took the row over) is told to `onLost`. Returns the function that stops it.
 */
export function keepLease(renew: () => Promise<boolean>, leaseMs: number, onLost: () => void = () => {}): () => void {
  const beat = () =>
    void renew().then(
      (held) => held || onLost(),
      () => undefined,
    );
  const timer = setInterval(beat, Math.max(10, Math.floor(leaseMs / 3)));
  timer.unref();
  return () => clearInterval(timer);
}

/** Hands back every row `owner` still holds, due at once (a shutdown whose steps outlast the grace period). */
export function handBackAll(prisma: PrismaClient, t: LeasedTable, owner: string): Promise<number> {
  return prisma.$executeRaw`
    UPDATE ${Prisma.raw(t.table)} SET lease_owner = NULL, lease_expires_at = NULL, ${Prisma.raw(t.due)} = now(), updated_at = now()
    WHERE lease_owner = ${owner}`;
}
