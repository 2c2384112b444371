/**
 * SQL statement counting for benchmark children: every `pg` query of this process (Prisma's adapter and
 * a bare pool alike go through `Client.prototype.query`) is counted, and the count is sent to the
 * parent when it asks (`'statements'` over IPC). Counting costs an increment, not Prisma's query events.
 */
import { Client } from 'pg';

export function countStatementsForParent(): void {
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
}
