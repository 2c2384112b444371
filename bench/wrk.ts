/**
 * wrk (a C load generator: Debian's `wrk` package) as the load generator of bench/peer.ts. It costs
 * about a quarter of the CPU per request of the node:http client in bench/harness.ts, so on a small
 * machine it is not what limits the fastest target (the fake provider, direct). The request (method,
 * headers, body) goes in a Lua script; the script's `done` prints the figures as one JSON line.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Measured, Target } from './harness';

const run = promisify(execFile);
const MARK = 'bench-wrk-result ';

/** `wrk -v`'s first line, or undefined when wrk is not installed. */
export async function wrkVersion(): Promise<string | undefined> {
  try {
    // wrk prints its version and usage and exits 1 on some builds: take the output either way.
    const { stdout } = await run('wrk', ['-v']).catch((err: { stdout?: string; code?: unknown }) => {
      if (err.code === 'ENOENT') throw err;
      return { stdout: err.stdout ?? '' };
    });
    return (
      stdout
        .split('\n')[0]
        .replace(/ Copyright.*/, '')
        .trim() || undefined
    );
  } catch {
    return undefined;
  }
}

/** A Lua string literal of `text` (JSON's escapes are Lua's for printable ASCII). */
function luaString(text: string): string {
  if (!/^[\x20-\x7e]*$/.test(text)) throw new Error(`wrk scripts here carry printable ASCII only: ${text.slice(0, 40)}`);
  return JSON.stringify(text);
}

function script(target: Target): string {
  const lines = [`wrk.method = ${luaString(target.method ?? 'GET')}`];
  if (target.body !== undefined) lines.push(`wrk.body = ${luaString(target.body)}`);
  for (const [name, value] of Object.entries(target.headers)) lines.push(`wrk.headers[${luaString(name)}] = ${luaString(value)}`);
  // Microseconds; errors.status counts answers other than 2xx/3xx.
  lines.push(
    'done = function(summary, latency, requests)',
    `  io.write(string.format('${MARK}{"requests":%d,"durationUs":%d,"p50Us":%d,"p99Us":%d,"status":%d,"connect":%d,"read":%d,"write":%d,"timeout":%d}\\n',`,
    '    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),',
    '    summary.errors.status, summary.errors.connect, summary.errors.read, summary.errors.write, summary.errors.timeout))',
    'end',
  );
  return lines.join('\n');
}

interface WrkResult {
  requests: number;
  durationUs: number;
  p50Us: number;
  p99Us: number;
  status: number;
  connect: number;
  read: number;
  write: number;
  timeout: number;
}

/** `concurrency` keep-alive connections (one wrk thread) issuing `target` for `seconds`; fails on any error or non-2xx answer. */
export async function wrkLoad(target: Target, concurrency: number, seconds: number): Promise<Measured> {
  const dir = await mkdtemp(path.join(tmpdir(), 'gw-bench-wrk-'));
  try {
    const file = path.join(dir, 'request.lua');
    await writeFile(file, script(target));
    const url = `http://127.0.0.1:${target.port}${target.path}`;
    // wrk takes whole seconds.
    const duration = `-d${Math.max(1, Math.round(seconds))}s`;
    const { stdout } = await run('wrk', ['-t1', `-c${concurrency}`, duration, '--timeout', '10s', '-s', file, url]);
    const line = stdout.split('\n').find((l) => l.startsWith(MARK));
    if (!line) throw new Error(`wrk printed no result for ${url}:\n${stdout}`);
    const r = JSON.parse(line.slice(MARK.length)) as WrkResult;
    const errors = r.status + r.connect + r.read + r.write + r.timeout;
    if (errors > 0) throw new Error(`wrk against ${target.method ?? 'GET'} ${url}: errors ${JSON.stringify(r)}`);
    if (r.requests === 0) throw new Error(`wrk against ${target.method ?? 'GET'} ${url}: no call ended within ${duration} (lengthen BENCH_SECONDS)`);
    return { perSecond: r.requests / (r.durationUs / 1e6), p50ms: r.p50Us / 1000, p99ms: r.p99Us / 1000, requests: r.requests };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
