/**
 * `npm run bench:chaos`: a database outage under load. The gateway (its own process) reaches Postgres
 * through a TCP proxy (test/support/tcp-proxy.ts); 20 keep-alive connections of load run while the
 * proxy cuts Postgres for 10 s and restores it, and 20 hosted jobs (fake OpenAI, its own process)
 * started before the cut run across it. Printed: requests during the outage (all 503 + Retry-After,
 * none 500), the slowest 503, the time to the first success after the restore, the success rate in the
 * 5 s after it, and whether every job succeeded, each created once at the provider. Exits 1 when an
 * acceptance figure is missed.
 *
 * Options (environment): BENCH_DATABASE_URL (a Postgres server, default TEST_DATABASE_URL or
 * postgresql://postgres@127.0.0.1:5432/postgres; a database is created and dropped), BENCH_CHAOS_MODE
 * (`refuse`, `reset` or `hang`; default `hang`), BENCH_CHAOS_CUT_SECONDS (10), BENCH_CONNECTIONS (20),
 * BENCH_JOBS (20).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTcpProxy, type CutMode } from '../test/support/tcp-proxy';
import { adminQuery } from './harness';

const SERVER_URL = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const MODE = (process.env.BENCH_CHAOS_MODE ?? 'hang') as CutMode;
const CUT_MS = Number(process.env.BENCH_CHAOS_CUT_SECONDS ?? 10) * 1000;
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 20);
const JOBS = Number(process.env.BENCH_JOBS ?? 20);
const PROVIDER_KEY = 'sk-bench-0123456789abcdef';
const API_KEY = `gw_bench_${randomBytes(16).toString('hex')}`;
/** How long after the restore requests are counted for the recovery rate, and the rate required. */
const RECOVERY_WINDOW_MS = 5000;
const REQUIRED_RECOVERY = 0.95;

interface Sample {
  start: number;
  end: number;
  status: number;
  retryAfter: boolean;
}

/** Runs `entry` (a compiled script next to this one) as a child process and waits for the port it reports. */
async function child(entry: string, env: Record<string, string>, onLine?: (line: string) => void): Promise<{ proc: ChildProcess; port: number }> {
  const proc = fork(path.join(__dirname, entry), [], { env: { ...process.env, ...env }, stdio: ['ignore', onLine ? 'pipe' : 'ignore', 'inherit', 'ipc'] });
  let rest = '';
  proc.stdout?.on('data', (chunk: Buffer) => {
    const lines = (rest + chunk.toString()).split('\n');
    rest = lines.pop() ?? '';
    lines.forEach((line) => onLine?.(line));
  });
  const port = await new Promise<number>((resolve, reject) => {
    proc.once('message', (message: unknown) => (typeof message === 'number' ? resolve(message) : reject(new Error(String(message)))));
    proc.once('exit', (code) => reject(new Error(`${entry} exited with ${code}`)));
  });
  return { proc, port };
}

/** One JSON request; status 0 for a request that failed without an answer (or took over 15 s). */
function request(port: number, method: string, urlPath: string, headers: Record<string, string>, body?: unknown, agent?: http.Agent) {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: any }>((resolve) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: urlPath,
        method,
        agent,
        timeout: 15_000,
        headers: { ...headers, ...(payload ? { 'content-type': 'application/json' } : {}) },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => {
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // Not JSON: kept as text.
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: parsed });
        });
      },
    );
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve({ status: 0, headers: {}, body: null }));
    req.end(payload);
  });
}

/** A JSONL dataset of `n` chat examples, uploaded as a fine-tuning file (multipart). */
async function uploadDataset(port: number, headers: Record<string, string>, n: number): Promise<string> {
  const lines = Array.from({ length: n }, (_, i) =>
    JSON.stringify({
      messages: [
        { role: 'user', content: `Question ${i}` },
        { role: 'assistant', content: `Answer ${i}` },
      ],
    }),
  ).join('\n');
  const boundary = `----chaos${randomBytes(8).toString('hex')}`;
  const body =
    `--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nfine-tune\r\n` +
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="chaos.jsonl"\r\nContent-Type: application/octet-stream\r\n\r\n${lines}\n\r\n--${boundary}--\r\n`;
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, path: '/v1/files', method: 'POST', headers: { ...headers, 'content-type': `multipart/form-data; boundary=${boundary}` } },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => (res.statusCode === 200 ? resolve(JSON.parse(text).id) : reject(new Error(`upload: HTTP ${res.statusCode} ${text}`))));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** `CONNECTIONS` keep-alive connections reading labels and jobs until `until()`; a 503 is followed by a 100 ms pause, as a client honouring Retry-After would wait. */
async function load(port: number, headers: Record<string, string>, until: () => boolean): Promise<Sample[]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const samples: Sample[] = [];
  const paths = ['/v1/labels', '/v1/fine_tuning/jobs?limit=5', '/v1/prompts/partials'];
  const worker = async (n: number) => {
    for (let i = n; !until(); i++) {
      const start = Date.now();
      const res = await request(port, 'GET', paths[i % paths.length], headers, undefined, agent);
      samples.push({ start, end: Date.now(), status: res.status, retryAfter: res.headers['retry-after'] !== undefined });
      if (res.status !== 200) await new Promise((r) => setTimeout(r, 100));
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, (_, n) => worker(n)));
  agent.destroy();
  return samples;
}

const statusCounts = (samples: Sample[]) =>
  Object.entries(samples.reduce<Record<string, number>>((acc, s) => ({ ...acc, [s.status || 'no answer']: (acc[s.status || 'no answer'] ?? 0) + 1 }), {}))
    .map(([status, count]) => `${status}×${count}`)
    .join(' ');

async function main(): Promise<void> {
  const dbName = `gw_chaos_${randomBytes(6).toString('hex')}`;
  const server = new URL(SERVER_URL);
  const dataDir = await mkdtemp(path.join(tmpdir(), 'gw-chaos-'));
  await adminQuery(SERVER_URL, `CREATE DATABASE ${dbName}`);
  const proxy = await startTcpProxy({ host: server.hostname, port: Number(server.port || 5432) });
  const databaseUrl = new URL(SERVER_URL);
  databaseUrl.pathname = `/${dbName}`;
  const children: ChildProcess[] = [];
  const logLines: string[] = [];
  try {
    const fake = await child('fake-openai.js', { BENCH_PROVIDER_KEY: PROVIDER_KEY });
    children.push(fake.proc);
    const gateway = await child(
      'gateway.js',
      {
        DATABASE_URL: proxy.via(databaseUrl.toString()),
        DATA_DIR: dataDir,
        GATEWAY_BOOTSTRAP_API_KEY: API_KEY,
        GATEWAY_MASTER_KEY: randomBytes(32).toString('hex'),
        GATEWAY_OPENAI_BASE_URL: `http://127.0.0.1:${fake.port}/v1`,
        // Jobs take several polls at the fake: they are still running when the database goes away.
        GATEWAY_JOB_POLL_MS: '1000',
        BENCH_GATEWAY_LOG_LEVEL: 'info',
      },
      (line) => logLines.push(line),
    );
    children.push(gateway.proc);
    const headers = { 'x-gateway-api-key': API_KEY };
    const created = await request(gateway.port, 'POST', '/v1/integrations', headers, {
      slug: 'chaos-openai',
      provider: 'openai',
      name: 'chaos',
      credentials: { api_key: PROVIDER_KEY },
      options: {},
    });
    if (created.status !== 200) throw new Error(`integration: HTTP ${created.status}`);
    const fileId = await uploadDataset(gateway.port, headers, 12);
    const jobIds: string[] = [];
    for (let i = 0; i < JOBS; i++) {
      const job = await request(gateway.port, 'POST', '/v1/fine_tuning/jobs', headers, {
        model: 'gpt-4o-mini',
        training_file: fileId,
        suffix: `chaos-${i}`,
        gateway_options: { 'x-gateway-provider': '@chaos-openai' },
      });
      if (job.status !== 200) throw new Error(`job: HTTP ${job.status}`);
      jobIds.push(job.body.id);
    }

    // Load from before the cut to 10 s after the restore; the cut comes as the first jobs reach the provider,
    // so it finds some submitted and some not, and none finished.
    let cutAt = Number.POSITIVE_INFINITY;
    let restoredAt = Number.POSITIVE_INFINITY;
    let done = false;
    const loading = load(gateway.port, headers, () => done);
    const providerJobs = async (): Promise<string[]> =>
      (await request(fake.port, 'GET', '/v1/fine_tuning/jobs?limit=1000', { authorization: `Bearer ${PROVIDER_KEY}` })).body.data.map(
        (j: { metadata: Record<string, string> | null }) => j.metadata?.gateway_job_id,
      );
    for (const until = Date.now() + 10_000; Date.now() < until && (await providerJobs()).length === 0;) await new Promise((r) => setTimeout(r, 10));
    const jobStatuses = () => Promise.all(jobIds.map(async (id) => (await request(gateway.port, 'GET', `/v1/fine_tuning/jobs/${id}`, headers)).body?.status));
    const unfinishedAtCut = (await jobStatuses()).filter((s) => s !== 'succeeded').length;
    const submittedAtCut = (await providerJobs()).length;
    await proxy.cut(MODE);
    cutAt = Date.now();
    await new Promise((r) => setTimeout(r, CUT_MS));
    await proxy.restore();
    restoredAt = Date.now();
    await new Promise((r) => setTimeout(r, 10_000));
    done = true;
    const samples = await loading;

    // Jobs: all succeeded, each created once at the provider.
    const deadline = Date.now() + 90_000;
    let statuses: string[] = [];
    while (Date.now() < deadline) {
      statuses = await jobStatuses();
      if (statuses.every((s) => s === 'succeeded')) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    const submittedFor = await providerJobs();
    const createdOnce = jobIds.every((id) => submittedFor.filter((s) => s === id).length === 1);

    const during = samples.filter((s) => s.start >= cutAt && s.end <= restoredAt);
    const unavailable = samples.filter((s) => s.status === 503);
    const firstSuccess = samples.filter((s) => s.start >= restoredAt && s.status === 200).sort((x, y) => x.end - y.end)[0];
    const recoveryWindow = samples.filter((s) => s.start >= restoredAt && s.start < restoredAt + RECOVERY_WINDOW_MS);
    const recoveryRate = recoveryWindow.filter((s) => s.status === 200).length / Math.max(1, recoveryWindow.length);
    const afterWindow = samples.filter((s) => s.start >= restoredAt + RECOVERY_WINDOW_MS);
    const otherErrors = samples.filter((s) => s.status >= 500 && s.status !== 503);
    const noAnswer = samples.filter((s) => s.status === 0);
    const max503 = Math.max(0, ...unavailable.map((s) => s.end - s.start));
    const alive = gateway.proc.exitCode === null && gateway.proc.signalCode === null;
    const paused = logLines.filter((l) => l.includes('job monitor paused')).length;
    const resumed = logLines.filter((l) => l.includes('job monitor resumed')).length;

    const checks: [string, string, boolean][] = [
      ['requests during the outage', `${during.length}: ${statusCounts(during)}`, during.length > 0 && during.every((s) => s.status === 503 && s.retryAfter)],
      ['5xx other than 503 / no answer (whole run)', `${otherErrors.length} / ${noAnswer.length}`, otherErrors.length === 0 && noAnswer.length === 0],
      ['slowest 503', `${max503} ms`, max503 < 5000],
      [
        'first success after the restore',
        firstSuccess ? `${firstSuccess.end - restoredAt} ms` : 'none',
        !!firstSuccess && firstSuccess.end - restoredAt < 5000,
      ],
      [
        `success in the ${RECOVERY_WINDOW_MS / 1000} s after the restore`,
        `${(recoveryRate * 100).toFixed(1)} % of ${recoveryWindow.length}`,
        recoveryRate >= REQUIRED_RECOVERY,
      ],
      ['success after that', `${afterWindow.filter((s) => s.status === 200).length}/${afterWindow.length}`, afterWindow.every((s) => s.status === 200)],
      ['gateway process alive', String(alive), alive],
      ['hosted jobs unfinished / at the provider at the cut', `${unfinishedAtCut}/${JOBS} / ${submittedAtCut}/${JOBS}`, unfinishedAtCut > 0],
      ['hosted jobs succeeded', `${statuses.filter((s) => s === 'succeeded').length}/${JOBS}`, statuses.every((s) => s === 'succeeded')],
      ['jobs created at the provider (each once)', `${submittedFor.length} for ${JOBS} jobs`, createdOnce && submittedFor.length === JOBS],
      ['job monitor log: paused / resumed', `${paused} / ${resumed}`, paused === 1 && resumed === 1],
    ];
    console.log(`\nbench:chaos — Postgres cut (${MODE}) for ${CUT_MS / 1000} s under ${CONNECTIONS} connections; ${samples.length} requests in all\n`);
    for (const [what, figure, ok] of checks) console.log(`  ${ok ? 'ok  ' : 'FAIL'}  ${what.padEnd(52)} ${figure}`);
    console.log('');
    if (checks.some(([, , ok]) => !ok)) process.exitCode = 1;
  } finally {
    for (const proc of children) proc.kill('SIGTERM');
    await Promise.all(children.map((proc) => new Promise((r) => (proc.exitCode === null ? proc.once('exit', r) : r(null)))));
    await proxy.close();
    await adminQuery(SERVER_URL, `DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    await rm(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
