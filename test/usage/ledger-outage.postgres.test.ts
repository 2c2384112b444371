/**
 * The usage ledger's writes (COPY on a connection of their own) while Postgres is away, through a TCP
 * proxy that cuts the link the three ways it happens: the flush fails, its rows are kept and logged,
 * and the first flush after the link is back writes each of them once; the connection a COPY failed on
 * is not reused.
 *
 * Postgres only: the embedded PGlite runs inside the gateway's process and has no link to cut.
 */
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { openDatabase, type Database } from '../../src/db/database';
import { createLogger } from '../../src/logger';
import { UsageLedger } from '../../src/modules/usage/usage.ledger';
import { UsageRepository } from '../../src/modules/usage/usage.repository';
import { adminQuery, createTestDatabase, type TestDatabase } from '../support/database';
import { startTcpProxy, type CutMode, type TcpProxy } from '../support/tcp-proxy';
import { chatRow } from './harness';
import type { UsageRow } from '../../src/modules/usage/usage.model';

const describePostgres = process.env.TEST_DATABASE_URL ? describe : describe.skip;

describePostgres('usage ledger writes through a Postgres outage', () => {
  let database: TestDatabase;
  let proxy: TcpProxy;
  let db: Database;
  const logged: Record<string, unknown>[] = [];
  let ledger: UsageLedger;
  let organisationId: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    const direct = new URL(database.databaseUrl!);
    proxy = await startTcpProxy({ host: direct.hostname, port: Number(direct.port || 5432) });
    db = await openDatabase({ databaseUrl: proxy.via(database.databaseUrl!), pgliteDir: 'memory://', timeouts: { connectMs: 1000, queryMs: 2000 } });
    const destination = new Writable({ write: (line: Buffer, _encoding, done) => done(void logged.push(JSON.parse(line.toString()))) });
    const options = { enabled: true, flushMs: 60_000, maxRows: 100, retentionDays: 90 };
    ledger = new UsageLedger(new UsageRepository(db.prisma, db.copyRows), options, createLogger('warn', destination));
    ({ id: organisationId } = await db.prisma.organisation.create({ data: { name: 'ledger outage' } }));
  });

  afterAll(async () => {
    await db?.close();
    await proxy?.close();
    await database?.drop();
  });

  const rows = (count: number, prefix: string): UsageRow[] => Array.from({ length: count }, () => chatRow(organisationId, `${prefix}-${randomUUID()}`));

  const stored = async (requestIds: string[]) =>
    (await adminQuery(database.databaseUrl!, 'SELECT request_id FROM usage_records WHERE request_id = ANY($1) ORDER BY request_id', [requestIds])).map(
      (row) => row.request_id,
    );

  it.each<CutMode>(['refuse', 'reset', 'hang'])('connections %s: the rows are kept, then written once when the link is back', async (mode) => {
    // A COPY before the cut: the ledger's connection is open when the link goes.
    const before = rows(3, `before-${mode}`);
    before.forEach((row) => ledger.record(row));
    await ledger.flush();
    const during = rows(5, mode);
    const ids = during.map((row) => row.requestId!).sort();
    await proxy.cut(mode);
    try {
      during.forEach((row) => ledger.record(row));
      logged.length = 0;
      await ledger.flush();
      expect(logged).toEqual([expect.objectContaining({ msg: 'usage ledger: insert failed, rows kept for the next flush', held: 5, dropped: 0 })]);
    } finally {
      await proxy.restore();
    }
    await ledger.flush();
    expect(await stored(ids)).toEqual(ids);
    expect(await stored(before.map((row) => row.requestId!))).toHaveLength(3);
  });
});
