/** What the process-based benchmarks (client-mode.ts, chat.ts, reads.ts) share: children reporting their port, and a keep-alive load generator. */
import { fork, type ChildProcess } from 'node:child_process';
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

/** Runs `entry` (a compiled script next to this one) as a child process and waits for the port it reports. */
export async function child(entry: string, env: Record<string, string>, execArgv: string[] = []): Promise<{ proc: ChildProcess; port: number }> {
  const proc = fork(path.join(__dirname, entry), [], { env: { ...process.env, ...env }, execArgv, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const port = await new Promise<number>((resolve, reject) => {
    proc.once('message', (message: unknown) => (typeof message === 'number' ? resolve(message) : reject(new Error(String(message)))));
    proc.once('exit', (code) => reject(new Error(`${entry} exited with ${code}`)));
  });
  return { proc, port };
}

/** `concurrency` keep-alive connections issuing `target` for `seconds`; requests per second, p50 latency and the number of requests. */
export async function load(target: Target, concurrency: number, seconds = SECONDS): Promise<{ perSecond: number; p50ms: number; requests: number }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const latencies: number[] = [];
  const deadline = Date.now() + seconds * 1000;
  const once = () =>
    new Promise<void>((resolve, reject) => {
      const start = performance.now();
      const { port, path, headers, method = 'GET', body } = target;
      const req = http.request({ host: '127.0.0.1', port, path, method, headers, agent }, (res) => {
        res.resume();
        res.on('end', () => {
          if (res.statusCode !== 200) reject(new Error(`HTTP ${res.statusCode} from ${target.path}`));
          latencies.push(performance.now() - start);
          resolve();
        });
      });
      req.on('error', reject);
      req.end(body);
    });
  const worker = async () => {
    while (Date.now() < deadline) await once();
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsed = (performance.now() - started) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return { perSecond: latencies.length / elapsed, p50ms: latencies[Math.floor(latencies.length / 2)], requests: latencies.length };
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
