/**
 * SQL statement counting for benchmark children: the count is sent to the parent when it asks
 * (`'statements'` over IPC). On Postgres every `pg` query of this process is counted (Prisma's adapter
 * and a bare pool alike go through `Client.prototype.query`), for an increment each. The embedded
 * PGlite has no such seam: there the gateway counts what Prisma sends (`onQuery`, returned here).
 */
import { Client } from 'pg';

export function countStatementsForParent(): () => void {
  let count = 0;
  const query = Client.prototype.query as (...args: unknown[]) => unknown;
  Client.prototype.query = function (this: Client, ...args: unknown[]) {
    count++;
    return query.apply(this, args);
  } as typeof Client.prototype.query;
  process.on('message', (message) => {
    if (message === 'statements') process.send?.({ statements: count });
    // A normal exit, so `--cpu-prof` writes its profile.
    if (message === 'exit') process.exit(0);
  });
  return () => count++;
}
