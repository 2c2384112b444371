/**
 * How the ledger batches its writes under load: a flush writes the rows buffered when it starts, and
 * rows recorded while it writes wait for the next flush instead of being written in a loop of small
 * inserts (which, under steady traffic, never ended and cost most of the ledger's time per call).
 */
import { setTimeout } from 'node:timers/promises';
import { openDatabase, type Database } from '../../src/db/database';
import { createLogger } from '../../src/logger';
import { UsageLedger } from '../../src/modules/usage/usage.ledger';
import type { UsageRow } from '../../src/modules/usage/usage.model';
import { UsageRepository } from '../../src/modules/usage/usage.repository';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { chatRow } from './harness';

/** The real repository, its inserts counted and each held back a little, as a database under load answers. */
class CountedRepository extends UsageRepository {
  readonly inserts: number[] = [];

  override async insert(rows: UsageRow[]): Promise<void> {
    this.inserts.push(rows.length);
    await setTimeout(100);
    await super.insert(rows);
  }
}

let database: TestDatabase;
let db: Database;
let organisationId: string;

beforeAll(async () => {
  database = await createTestDatabase();
  db = await openDatabase({ databaseUrl: database.databaseUrl, pgliteDir: database.pgliteDir, pgliteLoadDataDir: database.pgliteLoadDataDir });
  ({ id: organisationId } = await db.prisma.organisation.create({ data: { name: 'ledger batching' } }));
});

afterAll(async () => {
  await db?.close();
  await database?.drop();
});

const row = (requestId: string) => chatRow(organisationId, requestId);

const stored = async () => (await db.prisma.usageRecord.findMany({ where: { organisationId }, orderBy: { id: 'asc' } })).map((r) => r.requestId);

it('writes in one flush the rows buffered when it started; rows recorded meanwhile wait for the next', async () => {
  const repository = new CountedRepository(db.prisma, db.copyRows);
  const ledger = new UsageLedger(repository, { enabled: true, flushMs: 60_000, maxRows: 100, retentionDays: 90 }, createLogger('silent'));
  ledger.record(row('before-0'));
  ledger.record(row('before-1'));
  const first = ledger.flush();
  // Calls go on while it writes, one every 10 ms.
  for (let i = 0; i < 3; i++) {
    await setTimeout(10);
    ledger.record(row(`meanwhile-${i}`));
  }
  await first;
  expect(repository.inserts).toEqual([2]);
  await ledger.flush();
  expect(repository.inserts).toEqual([2, 3]);
  expect(await stored()).toEqual(['before-0', 'before-1', 'meanwhile-0', 'meanwhile-1', 'meanwhile-2']);
});

it('splits what it writes into inserts of at most maxRows', async () => {
  await db.prisma.usageRecord.deleteMany({ where: { organisationId } });
  const repository = new CountedRepository(db.prisma, db.copyRows);
  const ledger = new UsageLedger(repository, { enabled: true, flushMs: 60_000, maxRows: 4, retentionDays: 90 }, createLogger('silent'));
  // The fourth row starts a flush, which takes what is buffered when it runs (after this loop).
  for (let i = 0; i < 5; i++) ledger.record(row(`row-${i}`));
  await ledger.flush();
  expect(repository.inserts).toEqual([4, 1]);
  expect(await stored()).toEqual(['row-0', 'row-1', 'row-2', 'row-3', 'row-4']);
});
