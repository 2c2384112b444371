/**
 * The hourly sums behind the Usage and Costs reads (usage_hourly, kept by a trigger on usage_records):
 * for every bucket width and every combination of `group_by`, from whole days, whole hours and a start
 * within an hour, to ends on and off the hour, the answers equal sums computed here from the ledger's
 * rows themselves, in a workspace's scope and an organisation's, with filters; rows on hour and day
 * edges, without workspace or key, of two organisations, written by several inserts. Pruning by
 * GATEWAY_USAGE_RETENTION_DAYS removes the same whole hours from both tables.
 */
import { randomUUID } from 'node:crypto';
import type { Scope } from '../../src/auth/scope';
import { createLogger } from '../../src/logger';
import { UsageLedger } from '../../src/modules/usage/usage.ledger';
import type { UsageRow } from '../../src/modules/usage/usage.model';
import { insertUsageRows, UsageRepository } from '../../src/modules/usage/usage.repository';
import { BUCKET_LIMITS, USAGE_GROUPS, type UsageGroup, type UsageQueryInput } from '../../src/modules/usage/usage.schemas';
import type { UsageResult } from '../../src/modules/usage/usage.service';
import { createTestServices, type TestServices } from '../support/services';

const HOUR = 3600;
const DAY = 86_400;
/** A whole day (2023-11-14 00:00 UTC), long enough ago for pruning to be tried on it. */
const BASE = 1_699_920_000;

let env: TestServices;
let repository: UsageRepository;
let org: Scope;
let rows: UsageRow[];
const otherWorkspace = randomUUID();
const keys = [randomUUID(), randomUUID(), null];

/** Times around the edges the rollup has: hours and days, a millisecond either side, and some in between. */
function edgeTimes(): number[] {
  const times: number[] = [];
  for (const hour of [0, 1, 23, 24, 25, 47, 48, 49, 50]) {
    const edge = (BASE + hour * HOUR) * 1000;
    times.push(edge - 1, edge, edge + 1, edge + 59_999, edge + 60_000, edge + 1_799_000, edge + 1_800_000, edge + 3_599_999);
  }
  return times;
}

function ledgerRows(organisationId: string, workspaces: (string | null)[]): UsageRow[] {
  return edgeTimes().map((ms, i) => ({
    time: new Date(ms),
    organisationId,
    workspaceId: workspaces[i % workspaces.length],
    apiKeyId: keys[i % keys.length],
    operation: i % 11 === 0 ? 'fine_tuning' : 'chat',
    provider: 'openai',
    integration: null,
    model: `model-${i % 2}`,
    baseModel: null,
    inputTokens: 100 + i,
    cachedTokens: i % 7,
    outputTokens: 10 + (i % 13),
    latencyMs: 5,
    ttftMs: null,
    status: i % 9 === 0 ? 500 : 200,
    mode: 'client',
    streamed: false,
    batch: i % 4 === 0,
    requestId: null,
  }));
}

/** Written as the ledger writes: several inserts, the same hours' groups in more than one. */
async function write(all: UsageRow[]): Promise<void> {
  for (let i = 0; i < all.length; i += 17) await repository.insert(all.slice(i, i + 17));
}

beforeAll(async () => {
  env = await createTestServices();
  org = env.scope;
  repository = new UsageRepository(env.services.db.prisma, env.services.db.copyRows);
  const other = await env.services.organisations.create('Other organisation');
  rows = ledgerRows(org.organisationId, [org.workspaceId, otherWorkspace, null]);
  await write([...rows, ...ledgerRows(other.organisation.id, [other.workspace.id])]);
});

afterAll(() => env.close());

/** The answer computed from the ledger's rows: each result as a sorted string, per bucket. */
function expected(
  scope: { organisationId: string; workspaceId: string | null },
  query: { startTime: number; endTime: number; width: number; groupBy: UsageGroup[] },
  of = rows,
) {
  const count = Math.ceil((query.endTime - query.startTime) / query.width);
  const buckets = Array.from({ length: count }, () => new Map<string, UsageResult>());
  for (const row of of) {
    const t = row.time.getTime() / 1000;
    if (row.organisationId !== scope.organisationId || (scope.workspaceId !== null && row.workspaceId !== scope.workspaceId)) continue;
    if (row.operation !== 'chat' || t < query.startTime || t >= query.endTime) continue;
    const grouped = <T>(name: UsageGroup, value: T) => (query.groupBy.includes(name) ? value : null);
    const group = {
      model: grouped('model', row.model),
      apiKeyId: grouped('api_key_id', row.apiKeyId),
      projectId: grouped('project_id', row.workspaceId),
      batch: grouped('batch', row.batch),
    };
    const bucket = buckets[Math.floor((t - query.startTime) / query.width)];
    const key = JSON.stringify(group);
    const sum = bucket.get(key) ?? { ...group, inputTokens: 0, cachedTokens: 0, outputTokens: 0, requests: 0 };
    bucket.set(key, {
      ...sum,
      inputTokens: sum.inputTokens + row.inputTokens,
      cachedTokens: sum.cachedTokens + row.cachedTokens,
      outputTokens: sum.outputTokens + row.outputTokens,
      requests: sum.requests + 1,
    });
  }
  return buckets.map((bucket) => [...bucket.values()].map((r) => JSON.stringify(r)).sort());
}

const canonical = (r: UsageResult) =>
  JSON.stringify({
    model: r.model,
    apiKeyId: r.apiKeyId,
    projectId: r.projectId,
    batch: r.batch,
    inputTokens: r.inputTokens,
    cachedTokens: r.cachedTokens,
    outputTokens: r.outputTokens,
    requests: r.requests,
  });

/** Every subset of the groupings. */
const GROUPINGS: UsageGroup[][] = Array.from({ length: 2 ** USAGE_GROUPS.length }, (_, mask) => USAGE_GROUPS.filter((_, i) => mask & (1 << i)));

const WIDTH = { '1m': 60, '1h': HOUR, '1d': DAY } as const;
const RANGES: { name: string; bucketWidth: keyof typeof WIDTH; startTime: number; endTime: number }[] = [
  { name: 'days from a whole day to a whole day', bucketWidth: '1d', startTime: BASE, endTime: BASE + 3 * DAY },
  { name: 'days from a whole day to within an hour', bucketWidth: '1d', startTime: BASE, endTime: BASE + DAY + 25 * HOUR + 1800 },
  { name: 'days from a whole hour', bucketWidth: '1d', startTime: BASE + HOUR, endTime: BASE + 2 * DAY + HOUR },
  { name: 'days from within an hour', bucketWidth: '1d', startTime: BASE + 1800, endTime: BASE + 2 * DAY + 1800 },
  { name: 'hours from a whole hour to within an hour', bucketWidth: '1h', startTime: BASE + 22 * HOUR, endTime: BASE + 49 * HOUR + 61 },
  { name: 'hours from within an hour', bucketWidth: '1h', startTime: BASE + 22 * HOUR + 60, endTime: BASE + 26 * HOUR + 60 },
  { name: 'minutes across a day edge', bucketWidth: '1m', startTime: BASE + DAY - 120, endTime: BASE + DAY + 1861 },
];

describe('usage answers over the hourly sums', () => {
  it.each(RANGES)('equal the ledger rows’ sums: $name, every group_by, both scopes', async ({ bucketWidth, startTime, endTime }) => {
    const width = WIDTH[bucketWidth];
    for (const scope of [{ ...org, workspaceId: null }, org]) {
      for (const groupBy of GROUPINGS) {
        const caller = { keyId: randomUUID(), ...scope };
        const page = await env.services.usage.service.completions(caller, { startTime, endTime, bucketWidth, groupBy, limit: BUCKET_LIMITS[bucketWidth].max });
        const want = expected(scope, { startTime, endTime, width, groupBy });
        expect(page.buckets.map((b) => b.results.map(canonical).sort())).toEqual(want);
        expect(page.buckets.map((b) => b.startTime)).toEqual(want.map((_, i) => startTime + i * width));
      }
    }
  });

  it('apply the filters as the ledger rows would', async () => {
    const caller = { keyId: randomUUID(), ...org, workspaceId: null };
    const range = { startTime: BASE, endTime: BASE + 2 * DAY + 7 * HOUR + 5, bucketWidth: '1d' as const, groupBy: ['model', 'batch'] as UsageGroup[] };
    const filtered = async (filter: Partial<UsageQueryInput>, keep: (row: UsageRow) => boolean) => {
      const page = await env.services.usage.service.completions(caller, { ...range, ...filter });
      expect(page.buckets.map((b) => b.results.map(canonical).sort())).toEqual(expected(caller, { ...range, width: DAY }, rows.filter(keep)));
    };
    await filtered({ models: ['model-1'] }, (r) => r.model === 'model-1');
    await filtered({ batch: true }, (r) => r.batch);
    await filtered({ projectIds: [otherWorkspace] }, (r) => r.workspaceId === otherWorkspace);
    await filtered({ apiKeyIds: [keys[0] as string] }, (r) => r.apiKeyId === keys[0]);
    // The rollup's "none" is not a key a filter can name.
    await filtered({ apiKeyIds: ['00000000-0000-0000-0000-000000000000'] }, () => false);
  });

  it('hold one row per hour and group, whose sums are the ledger rows’', async () => {
    const { prisma } = env.services.db;
    const groups = await prisma.$queryRaw<{ n: bigint }[]>`
      SELECT count(*) AS n FROM (SELECT DISTINCT organisation_id, date_trunc('hour', time AT TIME ZONE 'UTC'), workspace_id, api_key_id, operation, model, batch FROM usage_records) AS g`;
    expect(await prisma.usageHourly.count()).toBe(Number(groups[0].n));
    const [raw] = await prisma.$queryRaw<
      { input: bigint; requests: bigint }[]
    >`SELECT sum(input_tokens)::bigint AS input, count(*)::bigint AS requests FROM usage_records`;
    const [hourly] = await prisma.$queryRaw<
      { input: bigint; requests: bigint }[]
    >`SELECT sum(input_tokens)::bigint AS input, sum(requests)::bigint AS requests FROM usage_hourly`;
    expect(hourly).toEqual(raw);
  });

  it('are read from the hourly sums for whole hours and from the ledger rows otherwise', async () => {
    // A row written behind the trigger's back (triggers off for its transaction) is seen by minute buckets only.
    const { prisma } = env.services.db;
    const caller = { keyId: randomUUID(), ...org };
    const query = { startTime: BASE + 40 * HOUR, endTime: BASE + 41 * HOUR, groupBy: [] as UsageGroup[] };
    const tokens = async (bucketWidth: '1m' | '1h') =>
      (await env.services.usage.service.completions(caller, { ...query, bucketWidth, limit: 60 })).buckets
        .flatMap((b) => b.results)
        .reduce((n, r) => n + r.inputTokens, 0);
    await prisma.$transaction([
      prisma.$executeRaw`SET LOCAL session_replication_role = replica`,
      prisma.$executeRaw`INSERT INTO usage_records (time, organisation_id, workspace_id, operation, provider, model, input_tokens, status, mode)
        VALUES (${new Date((BASE + 40 * HOUR + 10) * 1000)}, ${org.organisationId}::uuid, ${org.workspaceId}::uuid, 'chat', 'openai', 'unseen', 7, 200, 'client')`,
    ]);
    expect([await tokens('1m'), await tokens('1h')]).toEqual([7, 0]);
    await prisma.usageRecord.deleteMany({ where: { model: 'unseen' } });
  });
});

describe('writing', () => {
  // The ledger's buffered rows go by COPY; a fine-tuning job's or a provider batch's within their transaction, by INSERT.
  const ways = {
    COPY: (rows: UsageRow[]) => repository.insert(rows),
    INSERT: (rows: UsageRow[]) => insertUsageRows(env.services.db.prisma, rows),
  };

  it.each(Object.entries(ways))('stores text as it came by %s, whatever characters it holds, and null apart from the text NULL', async (way, write) => {
    const texts = ['a,"b"\\c {d}', ' NULL ', 'NULL', '\\N', '\\', '"', 'é, 🙂\n\t', '\r\n', '\ta\tb\t', '\\t'];
    const written = texts.map((text, i) => ({
      ...ledgerRows(org.organisationId, [org.workspaceId])[0],
      time: new Date(),
      provider: text,
      integration: i % 2 ? text : null,
      model: text,
      baseModel: i % 2 ? null : text,
      requestId: `${way}-${i}-${text}`,
    }));
    await write(written);
    const stored = await env.services.db.prisma.usageRecord.findMany({ where: { requestId: { startsWith: `${way}-` } }, orderBy: { id: 'asc' } });
    expect(stored.map(({ provider, integration, model, baseModel, requestId }) => ({ provider, integration, model, baseModel, requestId }))).toEqual(
      written.map(({ provider, integration, model, baseModel, requestId }) => ({ provider, integration, model, baseModel, requestId })),
    );
  });

  it.each(Object.entries(ways))(
    'stores by %s what Postgres cannot store (a provider id with NUL, a lone surrogate) as U+FFFD, with the rows beside it',
    async (way, write) => {
      const row = { ...ledgerRows(org.organisationId, [org.workspaceId])[0], time: new Date() };
      await write([
        { ...row, requestId: `${way}-unstorable-a\u0000b\ud800c`, model: 'm\udc00' },
        { ...row, requestId: `${way}-unstorable-plain` },
      ]);
      const stored = await env.services.db.prisma.usageRecord.findMany({ where: { requestId: { startsWith: `${way}-unstorable-` } }, orderBy: { id: 'asc' } });
      expect(stored.map(({ requestId, model }) => ({ requestId, model }))).toEqual([
        { requestId: `${way}-unstorable-a\uFFFDb\uFFFDc`, model: 'm\uFFFD' },
        { requestId: `${way}-unstorable-plain`, model: row.model },
      ]);
    },
  );
});

describe('pruning', () => {
  it('deletes the same whole hours from the ledger and its hourly sums', async () => {
    const { prisma } = env.services.db;
    const retentionDays = 90;
    // The retention's edge falls within hour 24 of the rows: that hour stays whole in both tables.
    const now = (BASE + 24 * HOUR + 1200 + retentionDays * DAY) * 1000;
    const ledger = new UsageLedger(repository, { enabled: true, flushMs: 1000, maxRows: 1000, retentionDays }, createLogger('silent'));
    const cut = new Date((BASE + 24 * HOUR) * 1000);
    const before = await prisma.usageRecord.count({ where: { time: { lt: cut } } });
    expect(before).toBeGreaterThan(0);
    expect(await ledger.prune(now)).toBe(before);
    expect(await prisma.usageRecord.count({ where: { time: { lt: cut } } })).toBe(0);
    expect(await prisma.usageHourly.count({ where: { hour: { lt: cut } } })).toBe(0);
    expect(await prisma.usageHourly.count({ where: { hour: cut } })).toBeGreaterThan(0);
    const kept = rows.filter((r) => r.time >= cut);
    const caller = { keyId: randomUUID(), ...org, workspaceId: null };
    const range = { startTime: BASE, endTime: BASE + 3 * DAY, groupBy: ['model', 'api_key_id'] as UsageGroup[] };
    for (const [bucketWidth, width] of [
      ['1d', DAY],
      ['1h', HOUR],
    ] as const) {
      const page = await env.services.usage.service.completions(caller, { ...range, bucketWidth, limit: BUCKET_LIMITS[bucketWidth].max });
      expect(page.buckets.map((b) => b.results.map(canonical).sort())).toEqual(expected(caller, { ...range, width }, kept));
    }
  });
});
