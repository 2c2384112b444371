/**
 * What the process-based benchmarks (client-mode.ts, chat.ts, reads.ts, peer.ts, streams.ts) share:
 * children reporting their port, a keep-alive load generator for plain and streamed requests, and
 * what a child process costs (CPU time, SQL statements).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { Client } from 'pg';

export const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);

export interface Target {
  port: number;
  path: string;
  headers: Record<string, string>;
  /** GET without. */
  method?: string;
  body?: string;
}

/** What a load generator measured: completed requests per second, latency percentiles, requests. */
export interface Measured {
  perSecond: number;
  p50ms: number;
  p99ms: number;
  requests: number;
}

/** Streams add the time to the first text chunk. */
export interface StreamMeasured extends Measured {
  firstTokenP50ms: number;
  firstTokenP99ms: number;
}

/**
 * Forks `file` with exactly `env` and waits for the port it reports (a number over IPC); anything else
 * it sends first, or an exit, is the reason it did not start.
 */
export async function forkReporting(
  file: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  execArgv: string[] = [],
): Promise<{ proc: ChildProcess; port: number }> {
  const proc = fork(file, args, { env, execArgv, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const port = await new Promise<number>((resolve, reject) => {
    proc.once('message', (message: unknown) => (typeof message === 'number' ? resolve(message) : reject(new Error(JSON.stringify(message)))));
    proc.once('exit', (code) => reject(new Error(`${path.basename(file)} exited with ${code}`)));
  });
  return { proc, port };
}

/** Runs `entry` (a compiled script next to this one) as a child process with `env` added to ours, and waits for the port it reports. */
export function child(entry: string, env: Record<string, string>, execArgv: string[] = []): Promise<{ proc: ChildProcess; port: number }> {
  return forkReporting(path.join(__dirname, entry), [], { ...process.env, ...env }, execArgv);
}

/** The value below which a share `q` of the sorted `values` lie. */
export function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

/** `concurrency` workers each running `once` back to back for `seconds`; the latencies it returned and the elapsed seconds. */
async function closedLoop(concurrency: number, seconds: number, once: () => Promise<number>): Promise<{ latencies: number[]; elapsed: number }> {
  const latencies: number[] = [];
  const deadline = Date.now() + seconds * 1000;
  const worker = async () => {
    while (Date.now() < deadline) latencies.push(await once());
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { latencies: latencies.sort((a, b) => a - b), elapsed: (performance.now() - started) / 1000 };
}

/** One request on `agent`: resolves with the response (status 200 required) once its body has ended. */
function requestOnce(target: Target, agent: http.Agent, onData?: (chunk: Buffer) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const { port, path, headers, method = 'GET', body } = target;
    const req = http.request({ host: '127.0.0.1', port, path, method, headers, agent }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        reject(new Error(`HTTP ${res.statusCode} from ${method} ${path} on port ${port}`));
        return;
      }
      if (onData) res.on('data', onData);
      else res.resume();
      res.on('end', resolve);
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** `concurrency` keep-alive connections issuing `target` for `seconds` (node:http client). */
export async function load(target: Target, concurrency: number, seconds = SECONDS): Promise<Measured> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const once = async () => {
    const start = performance.now();
    await requestOnce(target, agent);
    return performance.now() - start;
  };
  const { latencies, elapsed } = await closedLoop(concurrency, seconds, once);
  agent.destroy();
  return { perSecond: latencies.length / elapsed, p50ms: quantile(latencies, 0.5), p99ms: quantile(latencies, 0.99), requests: latencies.length };
}

/**
 * Streamed chat completions of `target` on `concurrency` keep-alive connections for `seconds`: the
 * figures of `load`, and the time to the first text chunk (every fake answer starts with "Answer").
 */
export async function streamLoad(target: Target, concurrency: number, seconds = SECONDS): Promise<StreamMeasured> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const firstTokens: number[] = [];
  const once = async () => {
    const start = performance.now();
    let firstToken = 0;
    await requestOnce(target, agent, (chunk) => {
      if (!firstToken && chunk.includes('"content":"A')) firstToken = performance.now() - start;
    });
    if (!firstToken) throw new Error(`no text chunk in a stream from port ${target.port}`);
    firstTokens.push(firstToken);
    return performance.now() - start;
  };
  const { latencies, elapsed } = await closedLoop(concurrency, seconds, once);
  agent.destroy();
  firstTokens.sort((a, b) => a - b);
  return {
    perSecond: latencies.length / elapsed,
    p50ms: quantile(latencies, 0.5),
    p99ms: quantile(latencies, 0.99),
    requests: latencies.length,
    firstTokenP50ms: quantile(firstTokens, 0.5),
    firstTokenP99ms: quantile(firstTokens, 0.99),
  };
}

/** CPU time a process has used (user + system, Linux /proc), in milliseconds. */
export function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  // utime and stime, fields 14 and 15 of stat(5), in clock ticks (100 per second on Linux).
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

/** Resident and peak resident memory of a process (Linux /proc), in bytes. */
export function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

/** The statements a child counting them (bench/statements.ts) has sent so far. */
export function statements(proc: ChildProcess): Promise<number> {
  return new Promise((resolve) => {
    const onMessage = (message: unknown) => {
      if (typeof message !== 'object' || message === null || !('statements' in message)) return;
      proc.off('message', onMessage);
      resolve(Number(message.statements));
    };
    proc.on('message', onMessage);
    proc.send('statements');
  });
}

/** Asks a child counting statements to exit normally (so `--cpu-prof` writes its profile), and waits for it. */
export function stop(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    proc.once('exit', () => resolve());
    proc.send('exit');
  });
}

/** One statement on a Postgres server (creating or dropping a scratch database). */
export async function adminQuery(serverUrl: string, sql: string): Promise<void> {
  const client = new Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** A scratch database named `prefix` and a random tail on BENCH_DATABASE_URL's server for this run (dropped by the returned function), or none: PGlite. */
export async function scratchDatabase(prefix: string): Promise<{ url?: string; drop(): Promise<void> }> {
  const server = process.env.BENCH_DATABASE_URL;
  if (!server) return { drop: async () => {} };
  const name = `${prefix}_${randomBytes(4).toString('hex')}`;
  await adminQuery(server, `CREATE DATABASE ${name}`);
  return {
    url: Object.assign(new URL(server), { pathname: `/${name}` }).toString(),
    drop: () => adminQuery(server, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

/** Runs a benchmark's main and exits with its outcome (children and sockets may still hold the loop open). */
export function runBench(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
