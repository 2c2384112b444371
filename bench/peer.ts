/**
 * `npm run bench:peer`: what the gateway adds to a call, side by side with the reference gateway
 * (bench/peer-gateway.ts: Portkey's open-source gateway, installed on demand) and with no gateway at
 * all, in one run. The fake OpenAI, the reference gateway and this gateway each run in their own
 * process; the load generator runs in this one. The same calls go
 *
 *   direct  to the fake;
 *   peer    through the reference gateway (`x-portkey-provider: openai`, `x-portkey-custom-host`: the fake);
 *   client  through this gateway in client mode (`x-gateway-provider: openai`, the fake as GATEWAY_OPENAI_BASE_URL);
 *   hosted  through this gateway in hosted mode (the fine-tuned model of a succeeded hosted job);
 *
 * for `GET /v1/fine_tuning/jobs` (client mode only), chat completions not streamed, and streamed
 * (53 chunks), at concurrency 1 and 50: throughput, p50 and p99 latency and what each gateway adds
 * to them, each gateway's CPU time per call and this gateway's SQL statements per call; time to the
 * first token of a stream at concurrency 1; then the goals of issue 24 as ratios, pass or fail.
 * Before anything is timed, every route must give the same answer as direct.
 *
 * The load generator is wrk when it is installed (Debian: `apt-get install wrk`), else node:http (it
 * costs about four times the CPU per request, enough to cap the direct figures on a small machine:
 * the run says which it used and, with wrk, what node:http reaches on the fastest target). Time to the
 * first token is always measured with node:http, which sees each chunk.
 *
 * Options (environment): BENCH_SECONDS (per measurement, default 3; whole seconds with wrk),
 * BENCH_WARMUP_SECONDS (before each target's first measurement, default 1), BENCH_CONCURRENCY
 * (default `1,50`), BENCH_SCENARIOS (some of `jobs,chat,stream`, e.g. to profile one kind of call),
 * BENCH_ROUNDS (rounds in rotating order, median of each figure; default 1),
 * BENCH_LOAD (`wrk` or `node`; default wrk when installed), BENCH_DATABASE_URL (a Postgres server
 * where a scratch database is created and dropped; default the embedded PGlite), BENCH_PEER_DIR (the
 * reference gateway's cache), BENCH_CPU_PROF (a directory: this gateway runs with `--cpu-prof` and
 * writes its profile there).
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { child, cpuMs, load, runBench, scratchDatabase, SECONDS, statements, stop, streamLoad, type Measured, type Target } from './harness';
import { fineTunedModel, workspaceKey } from './hosted-model';
import { installPeer, startPeer } from './peer-gateway';
import { report, type Figures, type Route, type ScenarioId } from './peer-report';
import { wrkLoad, wrkVersion } from './wrk';

const PROVIDER_KEY = 'sk-bench-0123456789abcdef';
/** Words in the question; the answer streams one chunk per word plus three (53). */
const WORDS = 50;
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 1);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1);
const CONCURRENCY = (process.env.BENCH_CONCURRENCY ?? '1,50').split(',').filter(Boolean).map(Number);
const SCENARIOS = (process.env.BENCH_SCENARIOS ?? 'jobs,chat,stream').split(',');
const GATEWAYS: Route[] = ['peer', 'client', 'hosted'];

interface Scenario {
  id: ScenarioId;
  name: string;
  stream: boolean;
  routes: Route[];
  target(route: Route): Target;
  /** What must be the same in every route's answer (the same call, answered the same way). */
  essence(body: string): string;
}

type Generator = (target: Target, concurrency: number, seconds: number) => Promise<Measured>;

interface Servers {
  fake: { proc: ChildProcess; port: number };
  gateway: { proc: ChildProcess; port: number };
  peer: { proc: ChildProcess; port: number };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** The text of a streamed answer and its number of events; the stream must end with `[DONE]`. */
function streamEssence(body: string): string {
  const events = body.split('\n\n').filter((e) => e.startsWith('data: '));
  if (events.at(-1) !== 'data: [DONE]') throw new Error(`a stream did not end with [DONE]: …${body.slice(-200)}`);
  const text = events
    .slice(0, -1)
    .map((e) => (JSON.parse(e.slice(6)) as { choices: Array<{ delta: { content?: string } }> }).choices[0]?.delta.content ?? '')
    .join('');
  return `${events.length} events: ${text}`;
}

/** The three calls on every route that serves them (hosted mode serves chat only). */
function scenarios(servers: Servers, appKey: string, model: string): Scenario[] {
  const { fake, gateway, peer } = servers;
  const auth = { authorization: `Bearer ${PROVIDER_KEY}` };
  const routes: Record<Route, { port: number; headers: Record<string, string> }> = {
    direct: { port: fake.port, headers: auth },
    peer: { port: peer.port, headers: { ...auth, 'x-portkey-provider': 'openai', 'x-portkey-custom-host': `http://127.0.0.1:${fake.port}/v1` } },
    client: { port: gateway.port, headers: { ...auth, 'x-gateway-api-key': appKey, 'x-gateway-provider': 'openai' } },
    hosted: { port: gateway.port, headers: { 'x-gateway-api-key': appKey } },
  };
  const question = Array.from({ length: WORDS }, (_, i) => `w${i}`).join(' ');
  const chat = (stream: boolean) => (route: Route) => ({
    port: routes[route].port,
    path: '/v1/chat/completions',
    method: 'POST',
    headers: { ...routes[route].headers, 'content-type': 'application/json' },
    body: JSON.stringify({ model, stream, messages: [{ role: 'user', content: question }] }),
  });
  return [
    {
      id: 'jobs',
      name: 'GET /v1/fine_tuning/jobs',
      stream: false,
      routes: ['direct', 'peer', 'client'],
      target: (route) => ({ port: routes[route].port, path: '/v1/fine_tuning/jobs', headers: routes[route].headers }),
      essence: (body) => (JSON.parse(body) as { data: Array<{ id: string }> }).data.map((job) => job.id).join(','),
    },
    {
      id: 'chat',
      name: 'chat completion, not streamed',
      stream: false,
      routes: ['direct', ...GATEWAYS],
      target: chat(false),
      essence: (body) => (JSON.parse(body) as { choices: Array<{ message: { content: string } }> }).choices[0].message.content,
    },
    {
      id: 'stream',
      name: `chat completion, streamed (${WORDS + 3} chunks)`,
      stream: true,
      routes: ['direct', ...GATEWAYS],
      target: chat(true),
      essence: streamEssence,
    },
  ];
}

/** One call of `target`, its status required to be 200; its body. */
async function probe(target: Target): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${target.port}${target.path}`, { method: target.method ?? 'GET', headers: target.headers, body: target.body });
  const body = await res.text();
  if (res.status !== 200) throw new Error(`${target.method ?? 'GET'} ${target.path} on port ${target.port}: HTTP ${res.status} ${body.slice(0, 300)}`);
  return body;
}

/** Every route gives the same answer as direct. */
async function checkSameAnswers(list: Scenario[]): Promise<void> {
  for (const scenario of list) {
    const expected = scenario.essence(await probe(scenario.target('direct')));
    for (const route of scenario.routes) {
      const got = scenario.essence(await probe(scenario.target(route)));
      if (got !== expected) throw new Error(`${scenario.name}: ${route} answers ${got.slice(0, 200)}, direct ${expected.slice(0, 200)}`);
    }
  }
}

/** Statements per millisecond the gateway sends while idle (its job monitor's), subtracted from those counted under load. */
async function idleStatementRate(gateway: ChildProcess): Promise<number> {
  const from = await statements(gateway);
  await new Promise((resolve) => setTimeout(resolve, 2000));
  return ((await statements(gateway)) - from) / 2000;
}

/**
 * Measures every scenario, concurrency and route, ROUNDS times in rotating order (each target warmed
 * up before its first measurement); the median of each figure per scenario, concurrency and route.
 */
async function measureAll(list: Scenario[], servers: Servers, generator: (s: Scenario) => Generator) {
  const idlePerMs = await idleStatementRate(servers.gateway.proc);
  const measure = async (scenario: Scenario, concurrency: number, route: Route): Promise<Figures> => {
    const proc = route === 'peer' ? servers.peer.proc : route === 'direct' ? undefined : servers.gateway.proc;
    const ours = proc === servers.gateway.proc;
    const sqlBefore = ours ? await statements(servers.gateway.proc) : 0;
    const cpuBefore = proc?.pid ? cpuMs(proc.pid) : 0;
    const from = performance.now();
    const figures: Figures = await generator(scenario)(scenario.target(route), concurrency, SECONDS);
    const elapsedMs = performance.now() - from;
    if (proc?.pid) figures.cpuMsPerCall = (cpuMs(proc.pid) - cpuBefore) / figures.requests;
    if (ours) figures.sqlPerCall = Math.max(0, (await statements(servers.gateway.proc)) - sqlBefore - idlePerMs * elapsedMs) / figures.requests;
    return figures;
  };
  const samples = new Map<string, Figures[]>();
  for (let round = 0; round < ROUNDS; round++) {
    for (const scenario of list) {
      for (const concurrency of CONCURRENCY) {
        for (const route of scenario.routes.map((_, i, all) => all[(i + round) % all.length])) {
          process.stderr.write(`\r${`round ${round + 1}: ${scenario.name}, concurrency ${concurrency}, ${route}`.padEnd(90)}`);
          if (round === 0 && WARMUP_SECONDS > 0) await generator(scenario)(scenario.target(route), concurrency, WARMUP_SECONDS);
          const id = `${scenario.id}|${concurrency}|${route}`;
          samples.set(id, [...(samples.get(id) ?? []), await measure(scenario, concurrency, route)]);
        }
      }
    }
  }
  process.stderr.write('\n');
  return (scenario: ScenarioId, concurrency: number, route: Route): Figures | undefined => {
    const runs = samples.get(`${scenario}|${concurrency}|${route}`);
    if (!runs) return undefined;
    const of = (pick: (s: Figures) => number | undefined) => {
      const values = runs.map(pick).filter((v): v is number => v !== undefined);
      return values.length ? median(values) : undefined;
    };
    return {
      perSecond: of((s) => s.perSecond) ?? 0,
      p50ms: of((s) => s.p50ms) ?? 0,
      p99ms: of((s) => s.p99ms) ?? 0,
      requests: of((s) => s.requests) ?? 0,
      cpuMsPerCall: of((s) => s.cpuMsPerCall),
      sqlPerCall: of((s) => s.sqlPerCall),
    };
  };
}

/** p50 time to the first token of a stream at concurrency 1 per route (node:http sees each chunk, whatever the generator); median over ROUNDS. */
async function measureFirstTokens(streamed: Scenario): Promise<(route: Route) => number | undefined> {
  const firstTokens = new Map<Route, number[]>();
  for (let round = 0; CONCURRENCY.includes(1) && round < ROUNDS; round++) {
    for (const route of streamed.routes) {
      const { firstTokenP50ms } = await streamLoad(streamed.target(route), 1, SECONDS);
      firstTokens.set(route, [...(firstTokens.get(route) ?? []), firstTokenP50ms]);
    }
  }
  return (route) => {
    const values = firstTokens.get(route);
    return values ? median(values) : undefined;
  };
}

async function main(): Promise<void> {
  const started = new Date();
  const loadBefore = loadavg();
  const versions = await installPeer();
  const wrk = process.env.BENCH_LOAD === 'node' ? undefined : await wrkVersion();
  if (process.env.BENCH_LOAD === 'wrk' && !wrk) throw new Error('BENCH_LOAD=wrk but wrk is not installed (Debian: apt-get install wrk)');
  const generator = (scenario: Scenario): Generator => (wrk ? wrkLoad : scenario.stream ? streamLoad : load);

  const dataDir = await mkdtemp(path.join(tmpdir(), 'gw-bench-peer-'));
  const database = await scratchDatabase('gw_bench_peer');
  const key = `gw_bench_${randomBytes(16).toString('hex')}`;
  const outbound: string[] = [];
  const children: Array<{ proc: ChildProcess; graceful: boolean }> = [];
  try {
    // The fake finishes a job in one poll and the monitor looks once a second: few background statements.
    const fake = await child('fake-openai.js', { BENCH_PROVIDER_KEY: PROVIDER_KEY, BENCH_FAKE_STEPS_PER_POLL: '3' });
    children.push({ proc: fake.proc, graceful: false });
    const gatewayEnv = {
      DATA_DIR: dataDir,
      ...(database.url ? { DATABASE_URL: database.url } : {}),
      GATEWAY_BOOTSTRAP_API_KEY: key,
      GATEWAY_OPENAI_BASE_URL: `http://127.0.0.1:${fake.port}/v1`,
      GATEWAY_JOB_POLL_MS: '1000',
      BENCH_COUNT_STATEMENTS: '1',
    };
    const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(process.env.BENCH_CPU_PROF)] : [];
    const gateway = await child('gateway.js', gatewayEnv, profile);
    children.push({ proc: gateway.proc, graceful: true });
    const peer = await startPeer(outbound);
    children.push({ proc: peer.proc, graceful: false });

    const model = await fineTunedModel(gateway.port, key, PROVIDER_KEY);
    const list = scenarios({ fake, gateway, peer }, await workspaceKey(gateway.port, key), model).filter((s) => SCENARIOS.includes(s.id));
    if (!list.length) throw new Error(`BENCH_SCENARIOS=${SCENARIOS.join(',')} names none of jobs, chat, stream`);
    await checkSameAnswers(list);
    const figures = await measureAll(list, { fake, gateway, peer }, generator);
    const streamed = list.find((s) => s.id === 'stream');
    const firstToken = streamed ? await measureFirstTokens(streamed) : () => undefined;
    // Whether node:http would have limited the fastest target (with wrk as the generator).
    const highest = Math.max(...CONCURRENCY);
    const fastest = list[0]?.target('direct');
    const node = wrk && fastest ? (await load(fastest, highest, SECONDS)).perSecond : undefined;
    if (outbound.length) throw new Error(`the reference gateway tried to connect to ${outbound.join(', ')}: its figures are void`);
    report({
      started,
      loadBefore,
      versions,
      database: database.url ? 'Postgres' : 'PGlite (embedded)',
      generator: wrk ? `${wrk} (one thread)` : `node:http (${process.env.BENCH_LOAD === 'node' ? 'BENCH_LOAD=node' : 'wrk not installed'})`,
      check: node === undefined ? undefined : { call: list[0].name, concurrency: highest, node, wrk: figures(list[0].id, highest, 'direct')?.perSecond ?? 0 },
      scenarios: list,
      concurrency: CONCURRENCY,
      figures,
      firstToken,
    });
  } finally {
    await Promise.all(children.map(({ proc, graceful }) => (graceful ? stop(proc) : Promise.resolve(proc.kill()))));
    await rm(dataDir, { recursive: true, force: true });
    await database.drop();
  }
}

runBench(main);
