/**
 * What bench/peer.ts prints: the run's conditions (date, load, versions, load generator), a table per
 * call, time to first token, and the goals of issue 24 as ratios of this run with pass or fail.
 */
import { cpus, loadavg } from 'node:os';
import type { Measured } from './harness';

export type Route = 'direct' | 'peer' | 'client' | 'hosted';
export type ScenarioId = 'jobs' | 'chat' | 'stream';

/** A measurement's figures, with the CPU time per call of the gateway in between and this gateway's SQL statements per call. */
export interface Figures extends Measured {
  cpuMsPerCall?: number;
  sqlPerCall?: number;
}

export interface PeerRun {
  started: Date;
  loadBefore: number[];
  /** The reference gateway's package and pinned dependencies. */
  versions: Record<string, string>;
  /** This gateway's database. */
  database: string;
  generator: string;
  /** With wrk as the generator: what node:http reached on the first call, direct, at the highest concurrency. */
  check?: { call: string; concurrency: number; node: number; wrk: number };
  scenarios: Array<{ id: ScenarioId; name: string; routes: Route[] }>;
  concurrency: number[];
  figures(scenario: ScenarioId, concurrency: number, route: Route): Figures | undefined;
  /** p50 time to the first token of a stream at concurrency 1. */
  firstToken(route: Route): number | undefined;
}

const LABELS: Record<Route, string> = { direct: 'direct (fake provider)', peer: 'reference gateway', client: 'client mode', hosted: 'hosted mode' };
const ms = (value: number | undefined) => (value === undefined ? '' : value.toFixed(2));

function printConditions(run: PeerRun): void {
  const loads = (values: number[]) => values.map((v) => v.toFixed(2)).join(' / ');
  console.log(`bench:peer, ${run.started.toISOString()}, ${cpus().length} cores, Node ${process.version}`);
  console.log(`load average (1 / 5 / 15 min): ${loads(run.loadBefore)} at the start, ${loads(loadavg())} at the end`);
  console.log(
    `reference gateway: ${Object.entries(run.versions)
      .map(([name, version]) => `${name} ${version}`)
      .join(', ')}; on 127.0.0.1, no outbound connection`,
  );
  console.log(`this gateway's database: ${run.database}; load generator: ${run.generator}; time to first token: node:http`);
  if (run.check) {
    const { call, concurrency, node, wrk } = run.check;
    const verdict = node < 0.9 * wrk ? 'node:http would have capped the direct figures' : 'node:http would not have been the limit either';
    console.log(
      `load generator check, ${call} direct at ${concurrency} connections: node:http ${Math.round(node)} req/s, wrk ${Math.round(wrk)} req/s (${verdict})`,
    );
  }
}

function printTables(run: PeerRun): void {
  for (const scenario of run.scenarios) {
    const rows = [];
    for (const concurrency of run.concurrency) {
      const direct = run.figures(scenario.id, concurrency, 'direct');
      for (const route of scenario.routes) {
        const f = run.figures(scenario.id, concurrency, route);
        if (!f || !direct) continue;
        const through = route !== 'direct';
        rows.push({
          concurrency,
          route: LABELS[route],
          'calls/s': Math.round(f.perSecond),
          'of direct': through ? `${Math.round((100 * f.perSecond) / direct.perSecond)}%` : '',
          'p50 ms': ms(f.p50ms),
          'p99 ms': ms(f.p99ms),
          'added p50 ms': through ? ms(f.p50ms - direct.p50ms) : '',
          'added p99 ms': through ? ms(f.p99ms - direct.p99ms) : '',
          'gateway CPU ms/call': through ? ms(f.cpuMsPerCall) : '',
          'SQL/call': f.sqlPerCall === undefined ? '' : f.sqlPerCall.toFixed(2),
        });
      }
    }
    console.log(scenario.name);
    console.table(rows);
  }
  const stream = run.scenarios.find((s) => s.id === 'stream');
  const direct = run.firstToken('direct');
  if (!stream || direct === undefined) return;
  console.log('time to first token of a stream, concurrency 1 (p50)');
  console.table(
    stream.routes.map((route) => {
      const value = run.firstToken(route);
      return { route: LABELS[route], 'first token ms': ms(value), added: route === 'direct' || value === undefined ? '' : ms(value - direct) };
    }),
  );
}

interface Goal {
  goal: string;
  /** The ratio or figure; undefined when its measurements are not in this run. */
  value: number | undefined;
  unit: 'x' | 'ms' | 'statements';
  wanted: string;
  met(value: number): boolean;
}

/** The goals of issue 24 that this run measures. */
function goals(run: PeerRun): Goal[] {
  const perSecond = (id: ScenarioId, c: number, route: Route) => run.figures(id, c, route)?.perSecond;
  const ratio = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined || b <= 0 ? undefined : a / b);
  const addedP50 = (route: Route) => {
    const through = run.figures('jobs', 1, route)?.p50ms;
    const direct = run.figures('jobs', 1, 'direct')?.p50ms;
    return through === undefined || direct === undefined ? undefined : through - direct;
  };
  const addedFirstToken = (route: Route) => {
    const through = run.firstToken(route);
    const direct = run.firstToken('direct');
    return through === undefined || direct === undefined ? undefined : through - direct;
  };
  const atLeast = (floor: number) => (v: number) => v >= floor;
  const atMost = (ceiling: number) => (v: number) => v <= ceiling;
  const list: Goal[] = [
    {
      goal: 'jobs list, 50 connections: client mode req/s ÷ reference',
      value: ratio(perSecond('jobs', 50, 'client'), perSecond('jobs', 50, 'peer')),
      unit: 'x',
      wanted: '>= 3x',
      met: atLeast(3),
    },
    {
      goal: 'jobs list, concurrency 1: client mode added p50 ÷ reference',
      value: ratio(addedP50('client'), addedP50('peer')),
      unit: 'x',
      wanted: '<= 0.5x',
      met: atMost(0.5),
    },
  ];
  for (const route of ['client', 'hosted'] as const) {
    const streams = perSecond('stream', 50, route);
    list.push(
      {
        goal: `streams, 50 concurrent: ${route} mode ÷ reference`,
        value: ratio(streams, perSecond('stream', 50, 'peer')),
        unit: 'x',
        wanted: '>= 3x',
        met: atLeast(3),
      },
      {
        goal: `streams, 50 concurrent: ${route} mode ÷ direct`,
        value: ratio(streams, perSecond('stream', 50, 'direct')),
        unit: 'x',
        wanted: '>= 0.5x',
        met: atLeast(0.5),
      },
      { goal: `streams, concurrency 1: ${route} mode added first token`, value: addedFirstToken(route), unit: 'ms', wanted: '<= 1 ms', met: atMost(1) },
    );
  }
  list.push(
    {
      goal: 'streams, 50 concurrent: hosted ÷ client mode',
      value: ratio(perSecond('stream', 50, 'hosted'), perSecond('stream', 50, 'client')),
      unit: 'x',
      wanted: '>= 0.9x',
      met: atLeast(0.9),
    },
    {
      goal: 'chat not streamed, 50: hosted ÷ client mode',
      value: ratio(perSecond('chat', 50, 'hosted'), perSecond('chat', 50, 'client')),
      unit: 'x',
      wanted: '>= 0.9x',
      met: atLeast(0.9),
    },
    {
      goal: 'hosted mode SQL statements per call, warm (concurrency 1)',
      // At 1 at most one call is in flight when a measurement starts or ends, so every statement belongs to a counted call.
      value: Math.max(...(['chat', 'stream'] as const).map((id) => run.figures(id, 1, 'hosted')?.sqlPerCall ?? 0)),
      unit: 'statements',
      wanted: '0',
      met: atMost(0.01),
    },
  );
  return list;
}

/** CPU time per call of the reference gateway over this gateway's, at the highest concurrency: the steadier comparison on a shared machine. */
function printCpuRatios(run: PeerRun): void {
  const c = Math.max(...run.concurrency);
  const ratios = run.scenarios.flatMap((scenario) => {
    const peer = run.figures(scenario.id, c, 'peer')?.cpuMsPerCall;
    return (['client', 'hosted'] as const).flatMap((route) => {
      const ours = run.figures(scenario.id, c, route)?.cpuMsPerCall;
      return peer === undefined || ours === undefined ? [] : [`${scenario.name}, ${route} mode ${(peer / ours).toFixed(2)}x`];
    });
  });
  console.log(`gateway CPU time per call at ${c}, reference ÷ this gateway (steadier than throughput on a shared machine): ${ratios.join('; ')}`);
}

function printGoals(run: PeerRun): void {
  const format = (g: Goal) =>
    g.value === undefined ? 'not measured' : g.unit === 'x' ? `${g.value.toFixed(2)}x` : g.unit === 'ms' ? `${g.value.toFixed(2)} ms` : g.value.toFixed(3);
  console.log('goals of issue 24, ratios of this run');
  console.table(
    goals(run).map((g) => ({ goal: g.goal, measured: format(g), wanted: g.wanted, result: g.value === undefined ? '' : g.met(g.value) ? 'pass' : 'FAIL' })),
  );
}

export function report(run: PeerRun): void {
  printConditions(run);
  printTables(run);
  printGoals(run);
  printCpuRatios(run);
}
