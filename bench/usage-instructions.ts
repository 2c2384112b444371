/**
 * `npm run bench:usage-instructions`: the instructions one streamed chat call costs the gateway with
 * the usage ledger on and off, counted by valgrind's callgrind (Debian's `valgrind`). Instruction
 * counts do not depend on what else the machine runs, unlike `bench:usage`'s streams per second.
 * They still move from run to run: V8 optimises on its own schedule, and one gateway's compilers took
 * 50 000 instructions per stream in one run and 240 000 in the next (either gateway, ledger on or
 * off). The row "outside V8's compilers and GC" is the program's own work, the one to compare; it too
 * moves by a few per cent between runs (what got optimised, and how): compare several runs.
 *
 * Each gateway (client mode, fake OpenAI, a scratch database of BENCH_DATABASE_URL, required: the
 * ledger writes there) is started once normally to create its key (under valgrind the first start's
 * transaction would time out), then under callgrind with instrumentation off; after BENCH_WARM
 * streams (default 6 000: after 400, V8 still spent ~40 % of the instructions compiling) it is switched
 * on for BENCH_STREAMS streams (default 2 000: with the default GATEWAY_USAGE_BATCH_ROWS of 1 000, the
 * ledger-on gateway writes two full batches meanwhile; its flush interval is set beyond the run so that
 * no partial batch is written). Both gateways run at once, about 3 minutes on an idle 2-core machine.
 * Reported per stream: all instructions, and those outside V8's compilers and garbage collector.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout } from 'node:timers/promises';
import { child, runBench, scratchDatabase, stop, streamLoad, type Target } from './harness';

const PROVIDER_KEY = 'sk-bench-0123456789abcdef';
const WARM = Number(process.env.BENCH_WARM ?? 6000);
const STREAMS = Number(process.env.BENCH_STREAMS ?? 2000);
/** Under valgrind everything is ~50× slower: the gateway's timeouts must not be what is measured. */
const SLOW = { GATEWAY_DB_CONNECT_TIMEOUT_MS: '120000', GATEWAY_DB_QUERY_TIMEOUT_MS: '300000', GATEWAY_PROVIDER_TIMEOUT_MS: '120000' };

/** Starts `bench/gateway.js` under callgrind, instrumentation off, and waits for its port. */
function underCallgrind(env: NodeJS.ProcessEnv, outDir: string): Promise<{ proc: ChildProcess; port: number }> {
  // The environment stays the bench's own otherwise: valgrind names its command pipes after HOST (and USER),
  // and callgrind_control, run with the bench's environment, must find them (bench/gateway.ts sets the address itself).
  const args = ['--tool=callgrind', '--instr-atstart=no', `--callgrind-out-file=${outDir}/cg.%p`, '-q'];
  const proc = spawn('valgrind', [...args, process.execPath, path.join(__dirname, 'gateway.js')], { env, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    proc.once('message', (port) => resolve({ proc, port: Number(port) }));
    proc.once('exit', (code) => reject(new Error(`the gateway under valgrind exited with ${code}`)));
  });
}

/** Streams through `target` until at least `count` have completed; how many did. */
async function streams(target: Target, count: number): Promise<number> {
  let done = 0;
  while (done < count) done += (await streamLoad(target, 4, 5)).requests;
  return done;
}

/** Instructions in callgrind's dumps: all, and those outside V8's compilers and garbage collector. */
function instructions(files: string[]): { all: number; program: number } {
  let all = 0;
  let program = 0;
  for (const file of files) {
    const annotated = execFileSync('callgrind_annotate', ['--threshold=100', file], { encoding: 'utf8', maxBuffer: 1 << 28 });
    for (const line of annotated.split('\n')) {
      const match = /^\s*([\d,]+) \(\s*[\d.]+%\)\s+(.*)$/.exec(line);
      if (!match || match[2].includes('PROGRAM TOTALS')) continue;
      const count = Number(match[1].replaceAll(',', ''));
      all += count;
      if (!/compiler::|maglev|Compil|Marking|Sweep|Scaveng|Heap::|heap::/.test(match[2])) program += count;
    }
  }
  return { all, program };
}

async function measure(ledger: 'on' | 'off', fakePort: number): Promise<{ streams: number; all: number; program: number }> {
  const database = await scratchDatabase(`gw_bench_instr_${ledger}`);
  const dataDir = await mkdtemp(path.join(tmpdir(), 'gw-bench-instr-'));
  const key = `gw_bench_${randomBytes(16).toString('hex')}`;
  if (!database.url) throw new Error('BENCH_DATABASE_URL (a Postgres server) is required');
  const env = {
    ...SLOW,
    DATA_DIR: dataDir,
    DATABASE_URL: database.url,
    GATEWAY_BOOTSTRAP_API_KEY: key,
    GATEWAY_OPENAI_BASE_URL: `http://127.0.0.1:${fakePort}/v1`,
    GATEWAY_USAGE_LEDGER: ledger,
    GATEWAY_USAGE_FLUSH_MS: String(3_600_000),
    BENCH_COUNT_STATEMENTS: '1',
  };
  try {
    const first = await child('gateway.js', env);
    await stop(first.proc);
    const gateway = await underCallgrind({ ...process.env, ...env }, dataDir);
    try {
      const body = JSON.stringify({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'Count the words of this request please' }] });
      const headers = {
        'x-gateway-api-key': key,
        'x-gateway-provider': 'openai',
        authorization: `Bearer ${PROVIDER_KEY}`,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
      };
      const target: Target = { port: gateway.port, path: '/v1/chat/completions', method: 'POST', headers, body };
      await streams(target, WARM);
      const pid = String(gateway.proc.pid);
      execFileSync('callgrind_control', ['--instr=on', pid], { stdio: 'ignore' });
      const counted = await streams(target, STREAMS);
      execFileSync('callgrind_control', ['--instr=off', pid], { stdio: 'ignore' });
      execFileSync('callgrind_control', ['--dump', pid], { stdio: 'ignore' });
      const dumps = async () => (await readdir(dataDir)).filter((name) => name.startsWith(`cg.${pid}.`)).map((name) => path.join(dataDir, name));
      while (!(await dumps()).length) await setTimeout(200);
      await setTimeout(1000);
      return { streams: counted, ...instructions(await dumps()) };
    } finally {
      gateway.proc.kill('SIGKILL');
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
    await database.drop();
  }
}

runBench(async () => {
  const fake = await child('fake-openai.js', { BENCH_PROVIDER_KEY: PROVIDER_KEY });
  try {
    const [on, off] = await Promise.all([measure('on', fake.port), measure('off', fake.port)]);
    const per = (m: typeof on, field: 'all' | 'program') => m[field] / m.streams;
    const row = (field: 'all' | 'program', label: string) => ({
      instructions: label,
      'ledger off / stream': Math.round(per(off, field)),
      'ledger on / stream': Math.round(per(on, field)),
      'on ÷ off': `${((100 * per(on, field)) / per(off, field)).toFixed(1)}%`,
    });
    console.table([row('all', 'all'), row('program', "outside V8's compilers and GC")]);
    console.log(`streams counted: ${off.streams} off, ${on.streams} on`);
  } finally {
    fake.proc.kill();
  }
});
