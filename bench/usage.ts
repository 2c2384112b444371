/**
 * `npm run bench:usage`: what the usage ledger costs and how fast it reads (issue 26 §7), in one run.
 *
 *   1. Streamed chat completions (client mode, fake OpenAI, each gateway in its own process) through a
 *      gateway with the ledger on and one with it off (GATEWAY_USAGE_LEDGER=off), both loaded at once
 *      in each round (after two rounds not counted), over several pairs of fresh processes: streams
 *      completed in the same seconds with the ledger as a share of without, and streams per second of
 *      gateway CPU (its process's, /proc) with it as a share of without — the gateway's capacity where
 *      it is CPU-bound (goal ≥ 95 %); on Postgres also that capacity if the ledger-on gateway paid for
 *      all of the database server's CPU meanwhile.
 *   2. 100 000 rows recorded through the ledger (buffer and batched inserts) into the database of
 *      BENCH_DATABASE_URL (a Postgres database, emptied of usage rows first) or an in-memory PGlite:
 *      rows written per second (goal ≥ 20 000).
 *   3. 1 000 000 rows over 30 days and 20 models, inserted by one SQL statement (so usage_records'
 *      trigger sums them into usage_hourly, as it does for the ledger's inserts), then the usage query
 *      for those 30 days by model (`bucket_width=1d`, `group_by=model`, from a whole day: the hourly
 *      sums), median of 5 (goal ≤ 200 ms on Postgres); and, for comparison, the same query from a
 *      start within an hour, which reads the ledger's rows (no goal).
 *
 * Options (environment): BENCH_SECONDS (per chat round, default 3), BENCH_PAIRS (pairs of fresh gateway
 * processes, default 6), BENCH_ROUNDS (chat rounds counted per pair, default 4), BENCH_WARM_ROUNDS (rounds
 * not counted before them, default 2), BENCH_CONCURRENCY
 * (streams at once per gateway, default 20), BENCH_DATABASE_URL (a Postgres server: the chat gateways
 * run on scratch databases of it, parts 2 and 3 on that database),
 * BENCH_USAGE_AA (set: the ledger-on gateway runs with it off too, an A/A run showing the bench's own
 * bias and spread), BENCH_USAGE_CHAT_ONLY (set: part 1 only), BENCH_CPU_PROF (a directory: both gateways run with `--cpu-prof` and write their
 * profiles there, named by pid, the ledger-on gateway's pid printed), BENCH_USAGE_V8_DEFAULTS (set: the
 * gateways run without `npm start`'s V8 settings).
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import { openDatabase, type Database } from '../src/db/database';
import { createLogger } from '../src/logger';
import { UsageLedger } from '../src/modules/usage/usage.ledger';
import type { UsageRow } from '../src/modules/usage/usage.model';
import { UsageRepository } from '../src/modules/usage/usage.repository';
import { UsageService } from '../src/modules/usage/usage.service';
import { child, cpuMs, quantile, runBench, scratchDatabase, SECONDS, stop, streamLoad, type Target } from './harness';

const PROVIDER_KEY = 'sk-bench-0123456789abcdef';
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 20);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const PAIRS = Number(process.env.BENCH_PAIRS ?? 6);
const WARM_ROUNDS = Number(process.env.BENCH_WARM_ROUNDS ?? 2);
/** The V8 settings `npm start` runs the gateway with (package.json; why: docs/production.md). */
const PRODUCTION_V8_FLAGS = ['--max-semi-space-size=64'];
/** Longer than the ledger's flush interval (GATEWAY_USAGE_FLUSH_MS, 1 s by default). */
const FLUSH_WAIT_MS = 1200;

type Side = { streams: number; cpuMs: number };
type Round = { on: Side; off: Side; databaseCpuMs: number };

async function chatRatio(): Promise<Record<string, string | number>> {
  const fake = await child('fake-openai.js', { BENCH_PROVIDER_KEY: PROVIDER_KEY });
  const key = `gw_bench_${randomBytes(16).toString('hex')}`;
  try {
    // Fresh processes for each pair: one gateway process can run a few per cent faster or slower than an
    // identically configured one for its whole life (V8's optimisation choices, its memory's layout), a
    // spread that rounds within one pair do not average away (A/A runs of one pair spread over 91–107 %).
    const pairs: Round[][] = [];
    for (let i = 0; i < PAIRS; i++) pairs.push(await pairRounds(fake.port, key, i));
    return report(pairs, Boolean(process.env.BENCH_DATABASE_URL));
  } finally {
    fake.proc.kill();
  }
}

/** One pair of gateways (ledger on, ledger off) started on their own databases, loaded at once for ROUNDS rounds after WARM_ROUNDS not counted. */
async function pairRounds(fakePort: number, key: string, index: number): Promise<Round[]> {
  const dirs = await Promise.all([mkdtemp(path.join(tmpdir(), 'gw-bench-usage-')), mkdtemp(path.join(tmpdir(), 'gw-bench-usage-'))]);
  const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(process.env.BENCH_CPU_PROF)] : [];
  // The gateway as production runs it (`npm start`, docs/production.md); BENCH_USAGE_V8_DEFAULTS: as bare `node`.
  const v8 = process.env.BENCH_USAGE_V8_DEFAULTS ? [] : PRODUCTION_V8_FLAGS;
  // On BENCH_DATABASE_URL's server (a scratch database each) the ledger's inserts run in Postgres's own
  // processes, as in production; on PGlite they run inside the gateway's process.
  const databases = await Promise.all([scratchDatabase('gw_bench_usage_on'), scratchDatabase('gw_bench_usage_off')]);
  const start = (dataDir: string, ledger: 'on' | 'off', databaseUrl: string | undefined) =>
    child(
      'gateway.js',
      {
        DATA_DIR: dataDir,
        ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
        GATEWAY_BOOTSTRAP_API_KEY: key,
        GATEWAY_OPENAI_BASE_URL: `http://127.0.0.1:${fakePort}/v1`,
        GATEWAY_USAGE_LEDGER: ledger,
        // Lets `stop` end the gateway normally, so that `--cpu-prof` writes its profile.
        BENCH_COUNT_STATEMENTS: '1',
      },
      [...v8, ...profile],
    );
  // BENCH_USAGE_AA: both gateways with the ledger off, the "on" one included: the bench's own bias and spread.
  const first = process.env.BENCH_USAGE_AA ? 'off' : 'on';
  // Started in turns (pair by pair) so that neither is always the older process.
  const order = index % 2 === 0 ? ([0, 1] as const) : ([1, 0] as const);
  const started: { proc: ChildProcess; port: number }[] = [];
  try {
    for (const side of order) started[side] = await start(dirs[side], side === 0 ? first : 'off', databases[side].url);
    const [on, off] = started;
    if (profile.length) console.log(`pair ${index}: ledger on: pid ${on.proc.pid}, off: pid ${off.proc.pid}`);
    const body = JSON.stringify({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'Count the words of this request please' }] });
    const target = (port: number): Target => ({
      port,
      path: '/v1/chat/completions',
      method: 'POST',
      headers: {
        'x-gateway-api-key': key,
        'x-gateway-provider': 'openai',
        authorization: `Bearer ${PROVIDER_KEY}`,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
      },
      body,
    });
    /**
     * A round: both gateways loaded at once for the same seconds, each by its own CONCURRENCY streams,
     * then the ledger's last flush waited for. What the machine does meanwhile (its other processes, the
     * host's neighbours, the database's work) falls on both alike: the round's ratios compare the two
     * gateways under one set of conditions, which rounds taken one after the other did not (the same
     * gateway's CPU per stream moved by ±30 % between consecutive 3-s rounds here).
     */
    const round = async (): Promise<Round> => {
      const before = { on: cpuMs(on.proc.pid!), off: cpuMs(off.proc.pid!), database: databaseCpuMs() };
      const [onRun, offRun] = await Promise.all([streamLoad(target(on.port), CONCURRENCY), streamLoad(target(off.port), CONCURRENCY)]);
      // The ledger's flush (every second) of the round's last rows is the round's cost, not the next round's.
      await setTimeout(FLUSH_WAIT_MS);
      return {
        on: { streams: onRun.requests, cpuMs: cpuMs(on.proc.pid!) - before.on },
        off: { streams: offRun.requests, cpuMs: cpuMs(off.proc.pid!) - before.off },
        databaseCpuMs: databaseCpuMs() - before.database,
      };
    };
    // Rounds not counted: both gateways' code compiled and their connections open before measuring.
    for (let i = 0; i < WARM_ROUNDS; i++) await round();
    const rounds: Round[] = [];
    for (let i = 0; i < ROUNDS; i++) rounds.push(await round());
    return rounds;
  } finally {
    // Also when the second gateway failed to start: the first one, the directories and the databases go.
    await Promise.all(started.filter(Boolean).map((c) => stop(c.proc)));
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
    await Promise.all(databases.map((d) => d.drop()));
  }
}

/** The pairs' rounds summed: streams on ÷ off in the same seconds, and per gateway CPU-second; each pair's figures listed. */
function report(pairs: Round[][], postgres: boolean): Record<string, string | number> {
  const sum = (rounds: Round[], pick: (r: Round) => number) => rounds.reduce((total, r) => total + pick(r), 0);
  const totalsOf = (rounds: Round[]) => ({
    on: { streams: sum(rounds, (r) => r.on.streams), cpuMs: sum(rounds, (r) => r.on.cpuMs) },
    off: { streams: sum(rounds, (r) => r.off.streams), cpuMs: sum(rounds, (r) => r.off.cpuMs) },
    databaseCpuMs: sum(rounds, (r) => r.databaseCpuMs),
  });
  const all = totalsOf(pairs.flat());
  const percent = (ratio: number) => `${(100 * ratio).toFixed(1)}%`;
  const perStream = (side: Side, extraMs = 0) => (side.cpuMs + extraMs) / side.streams;
  const listed = (ratio: (t: ReturnType<typeof totalsOf>) => number) => pairs.map((rounds) => (100 * ratio(totalsOf(rounds))).toFixed(0)).join(' ');
  const seconds = pairs.length * ROUNDS * SECONDS;
  return {
    part: `streamed chat, ledger on / off at once (${postgres ? 'postgres' : 'pglite'})`,
    'ledger off streams/s': Math.round(all.off.streams / seconds),
    'ledger on streams/s': Math.round(all.on.streams / seconds),
    'streams on ÷ off': `${percent(all.on.streams / all.off.streams)} (pairs ${listed((t) => t.on.streams / t.off.streams)})`,
    'streams per CPU-second on ÷ off': `${percent(perStream(all.off) / perStream(all.on))} (pairs ${listed((t) => perStream(t.off) / perStream(t.on))})`,
    goal: '≥ 95%',
    'gateway CPU ms/stream off / on': `${perStream(all.off).toFixed(3)} / ${perStream(all.on).toFixed(3)}`,
    // On Postgres, all of the server's CPU in the rounds charged to the ledger's calls (the other gateway's
    // key lookups are cached): the gateway's capacity if it also paid for the database's work.
    ...(postgres && { 'with all database CPU on ÷ off': percent(perStream(all.off) / perStream(all.on, all.databaseCpuMs)) }),
  };
}

/**
 * CPU time of this machine's Postgres server processes (by their command name, /proc), in milliseconds;
 * a process that ends between two readings takes its time with it, so this is a lower bound of what the server did.
 */
function databaseCpuMs(): number {
  let total = 0;
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'postgres') total += cpuMs(Number(pid));
    } catch {
      // Gone between the listing and the reading.
    }
  }
  return total;
}

const MODELS = Array.from({ length: 20 }, (_, i) => `model-${i}`);

function row(organisationId: string, workspaceId: string, time: Date, i: number): UsageRow {
  return {
    time,
    organisationId,
    workspaceId,
    apiKeyId: null,
    operation: 'chat',
    provider: 'openai',
    integration: null,
    model: MODELS[i % MODELS.length],
    baseModel: null,
    inputTokens: 100 + (i % 50),
    cachedTokens: 0,
    outputTokens: 20 + (i % 10),
    latencyMs: 100,
    ttftMs: 10,
    status: 200,
    mode: 'client',
    streamed: true,
    batch: false,
    requestId: null,
  };
}

async function ledgerWrites(db: Database, organisationId: string, workspaceId: string): Promise<Record<string, string | number>> {
  const count = 100_000;
  const ledger = new UsageLedger(
    new UsageRepository(db.prisma, db.copyRows),
    { enabled: true, flushMs: 1000, maxRows: 1000, retentionDays: 90 },
    createLogger('silent'),
  );
  const started = performance.now();
  const now = new Date();
  for (let i = 0; i < count; i++) ledger.record(row(organisationId, workspaceId, now, i));
  await ledger.stop();
  const seconds = (performance.now() - started) / 1000;
  return { part: `${count} ledger rows written (${db.kind})`, 'rows/s': Math.round(count / seconds), goal: '≥ 20000' };
}

async function usageQuery(db: Database, organisationId: string, workspaceId: string): Promise<Record<string, string | number>[]> {
  const total = 1_000_000;
  const day = 86_400;
  const end = Math.floor(Date.now() / 1000 / day) * day;
  const start = end - 30 * day;
  // Spread evenly over the 30 days, generated in the database (the ledger's write path is part 2); the
  // trigger on usage_records fills usage_hourly from this statement as from the ledger's.
  await db.prisma.$executeRawUnsafe(
    `INSERT INTO usage_records (time, organisation_id, workspace_id, operation, provider, model, input_tokens, output_tokens, status, mode, streamed)
     SELECT to_timestamp(${start} + (n::bigint * ${30 * day}) / ${total}), '${organisationId}'::uuid, '${workspaceId}'::uuid, 'chat', 'openai',
            'model-' || (n % ${MODELS.length}), 100 + n % 50, 20 + n % 10, 200, 'client', true
     FROM generate_series(0, ${total - 1}) AS n`,
  );
  await db.prisma.$executeRawUnsafe('ANALYZE usage_records');
  await db.prisma.$executeRawUnsafe('ANALYZE usage_hourly');
  const service = new UsageService(new UsageRepository(db.prisma, db.copyRows), null);
  const caller = { keyId: randomUUID(), organisationId, workspaceId: null };
  /** Median of 5 of the 30-day query by model, in days from `from`; every answer checked to hold all rows. */
  const median = async (from: number) => {
    const times: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t = performance.now();
      const page = await service.completions(caller, { startTime: from, endTime: from + 30 * day, bucketWidth: '1d', groupBy: ['model'], limit: 31 });
      times.push(performance.now() - t);
      const requests = page.buckets.flatMap((b) => b.results).reduce((n, r) => n + r.requests, 0);
      if (page.buckets.length !== 30 || (from === start && requests !== total))
        throw new Error(`expected 30 buckets of ${total} rows, got ${page.buckets.length} of ${requests}`);
    }
    return quantile(
      times.sort((a, b) => a - b),
      0.5,
    ).toFixed(1);
  };
  return [
    { part: `usage query, 30 days by model over ${total} rows (${db.kind}), hourly sums`, 'median ms': await median(start), goal: '≤ 200 ms (Postgres)' },
    { part: 'the same from a start within an hour (ledger rows)', 'median ms': await median(start + 1800), goal: '-' },
  ];
}

async function main(): Promise<void> {
  const rows = [await chatRatio()];
  if (process.env.BENCH_USAGE_CHAT_ONLY) return console.table(rows);
  const db = await openDatabase({ databaseUrl: process.env.BENCH_DATABASE_URL, pgliteDir: 'memory://' });
  try {
    await db.migrate();
    await db.prisma.usageRecord.deleteMany({});
    await db.prisma.usageHourly.deleteMany({});
    const organisation = await db.prisma.organisation.create({ data: { name: 'bench' } });
    const workspace = await db.prisma.workspace.create({
      data: { organisationId: organisation.id, slug: `bench-${randomBytes(4).toString('hex')}`, name: 'bench' },
    });
    rows.push(await ledgerWrites(db, organisation.id, workspace.id));
    rows.push(...(await usageQuery(db, organisation.id, workspace.id)));
    await db.prisma.usageRecord.deleteMany({ where: { organisationId: organisation.id } });
    await db.prisma.usageHourly.deleteMany({ where: { organisationId: organisation.id } });
    await db.prisma.organisation.delete({ where: { id: organisation.id } });
  } finally {
    await db.close();
  }
  console.log(
    `usage ledger (issue 26 §7; chat: client mode, concurrency ${CONCURRENCY}, ${PAIRS} pairs of fresh gateways, each ${ROUNDS} rounds of ${SECONDS}s after ${WARM_ROUNDS} not counted, both gateways at once)`,
  );
  console.table(rows);
}

runBench(main);
