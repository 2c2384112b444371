/**
 * `npm run bench:batches` (part of `npm run bench`; issue 23 §9): one gateway-run batch of
 * BENCH_BATCH_LINES (default 10 000) chat requests against the fake OpenAI answering each after a
 * fixed BENCH_BATCH_LATENCY_MS (default 50), fake and gateway in their own processes. Measured:
 *
 * - lines per second while the batch is `in_progress` (from the poll that first sees it there to the
 *   one that sees every line counted), as a share of GATEWAY_BATCH_CONCURRENCY / latency, the most a
 *   runner holding that many requests in flight can do (goal ≥ 90 %); create to `completed` beside it;
 * - the gateway's RSS growth from just before the create to the highest sample while it runs (goal ≤ 50 MB);
 * - SQL statements per line: every statement of the gateway process from the create to `completed`
 *   (load, claims, finishes, lease renewals, the output file), less those of the polls (goal ≤ 2).
 *
 * Postgres: BENCH_DATABASE_URL names a server where a scratch database is created and dropped; else
 * the embedded PGlite. Options (environment): BENCH_BATCH_LINES, BENCH_BATCH_LATENCY_MS,
 * BENCH_BATCH_CONCURRENCY (default 16), BENCH_CPU_PROF (a directory: the gateway runs with
 * `--cpu-prof` and writes its profile there).
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { child, memoryOf, runBench, scratchDatabase, statements, stop } from './harness';
import { call } from './hosted-model';

const PROVIDER_KEY = 'sk-bench-0123456789abcdef';
const LINES = Number(process.env.BENCH_BATCH_LINES ?? 10_000);
const LATENCY_MS = Number(process.env.BENCH_BATCH_LATENCY_MS ?? 50);
const CONCURRENCY = Number(process.env.BENCH_BATCH_CONCURRENCY ?? 16);
const POLL_MS = 250;
const MB = 1024 * 1024;

interface Progress {
  status: string;
  request_counts: { total: number; completed: number; failed: number };
}

/** What one run measured. */
interface Run {
  inProgressAt: number;
  countedAt: number;
  completedAt: number;
  polls: number;
  peakRss: number;
  final: Progress;
}

function batchFile(): Blob {
  const lines = Array.from({ length: LINES }, (_, i) =>
    JSON.stringify({
      custom_id: `line-${i + 1}`,
      method: 'POST',
      url: '/v1/chat/completions',
      body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: `Label item ${i + 1} of the evaluation set` }], max_tokens: 16 },
    }),
  );
  return new Blob([lines.join('\n') + '\n']);
}

/** Polls the batch until it has finished, noting when it ran and the gateway's highest RSS meanwhile. */
async function follow(port: number, key: string, id: string, gateway: ChildProcess, started: number): Promise<Run> {
  const run = { inProgressAt: 0, countedAt: 0, completedAt: 0, polls: 0, peakRss: 0 };
  for (;;) {
    const batch = (await call(port, key, 'GET', `/v1/batches/${id}`)) as unknown as Progress;
    const now = performance.now() - started;
    run.polls += 1;
    run.peakRss = Math.max(run.peakRss, memoryOf(gateway.pid!).rss);
    const { total, completed, failed } = batch.request_counts;
    if (!run.inProgressAt && batch.status !== 'validating') run.inProgressAt = now;
    if (!run.countedAt && total > 0 && completed + failed === total) run.countedAt = now;
    if (['completed', 'failed', 'expired', 'cancelled'].includes(batch.status)) return { ...run, completedAt: now, final: batch };
    await sleep(POLL_MS);
  }
}

/** Statements one poll of the batch costs (subtracted from the run's). */
async function pollStatements(port: number, key: string, id: string, gateway: ChildProcess): Promise<number> {
  const before = await statements(gateway);
  for (let i = 0; i < 10; i++) await call(port, key, 'GET', `/v1/batches/${id}`);
  return ((await statements(gateway)) - before) / 10;
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'gw-bench-batches-'));
  const database = await scratchDatabase('gw_bench_batches');
  const key = `gw_bench_${randomBytes(16).toString('hex')}`;
  const loadBefore = loadavg()[0];
  const children: Array<{ proc: ChildProcess; graceful: boolean }> = [];
  try {
    const fake = await child('fake-openai.js', { BENCH_PROVIDER_KEY: PROVIDER_KEY, BENCH_CHAT_DELAY_MS: String(LATENCY_MS) });
    children.push({ proc: fake.proc, graceful: false });
    const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(process.env.BENCH_CPU_PROF)] : [];
    const gateway = await child(
      'gateway.js',
      {
        DATA_DIR: dataDir,
        ...(database.url ? { DATABASE_URL: database.url } : {}),
        GATEWAY_BOOTSTRAP_API_KEY: key,
        GATEWAY_OPENAI_BASE_URL: `http://127.0.0.1:${fake.port}/v1`,
        GATEWAY_BATCH_CONCURRENCY: String(CONCURRENCY),
        // No fine-tuning jobs here: the monitor's polls stay out of the count.
        GATEWAY_JOB_POLL_MS: '3600000',
        BENCH_COUNT_STATEMENTS: '1',
      },
      profile,
    );
    children.push({ proc: gateway.proc, graceful: true });
    const { port } = gateway;
    await call(port, key, 'POST', '/v1/integrations', { slug: 'bench', provider: 'openai', credentials: { api_key: PROVIDER_KEY } });
    const form = new FormData();
    form.append('purpose', 'batch');
    form.append('file', batchFile(), 'requests.jsonl');
    const file = await call(port, key, 'POST', '/v1/files', form);

    const rssBefore = memoryOf(gateway.proc.pid!).rss;
    const statementsBefore = await statements(gateway.proc);
    const started = performance.now();
    const created = await call(port, key, 'POST', '/v1/batches', {
      input_file_id: file.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
      gateway_options: { 'x-gateway-provider': '@bench', 'x-gateway-batch-runner': 'gateway' },
    });
    const run = await follow(port, key, String(created.id), gateway.proc, started);
    const runStatements = (await statements(gateway.proc)) - statementsBefore;
    const perPoll = await pollStatements(port, key, String(created.id), gateway.proc);
    const { total, completed } = run.final.request_counts;
    if (run.final.status !== 'completed' || completed !== LINES || total !== LINES) throw new Error(`batch ended ${JSON.stringify(run.final)}`);

    const ceiling = (CONCURRENCY * 1000) / LATENCY_MS;
    const sending = LINES / ((run.countedAt - run.inProgressAt) / 1000);
    const overall = LINES / (run.completedAt / 1000);
    const perLine = (runStatements - perPoll * (run.polls + 1)) / LINES;
    console.log(
      `gateway-run batch of ${LINES} lines, GATEWAY_BATCH_CONCURRENCY ${CONCURRENCY}, provider latency ${LATENCY_MS} ms ` +
        `(ceiling ${Math.round(ceiling)} lines/s); ${database.url ? 'Postgres' : 'PGlite (embedded)'}; ` +
        `1-min load average before/after ${loadBefore.toFixed(2)}/${loadavg()[0].toFixed(2)} (2 cores may be shared: compare shares, not absolutes)`,
    );
    console.table([
      { figure: 'lines/s while in_progress', value: Math.round(sending), 'of ceiling': `${((100 * sending) / ceiling).toFixed(1)}%`, goal: '≥ 90%' },
      { figure: 'lines/s, create to completed', value: Math.round(overall), 'of ceiling': `${((100 * overall) / ceiling).toFixed(1)}%`, goal: '' },
      { figure: 'gateway RSS growth (MB)', value: ((run.peakRss - rssBefore) / MB).toFixed(1), 'of ceiling': '', goal: '≤ 50 MB' },
      { figure: 'SQL statements per line', value: perLine.toFixed(2), 'of ceiling': '', goal: '≤ 2' },
    ]);
  } finally {
    await Promise.all(children.map(({ proc, graceful }) => (graceful ? stop(proc) : Promise.resolve(proc.kill()))));
    await rm(dataDir, { recursive: true, force: true });
    await database.drop();
  }
}

runBench(main);
