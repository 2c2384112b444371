/**
 * `npm run bench`: throughput of a few representative requests against an in-process gateway on
 * loopback, reported as ratios to a baseline (`GET /healthz`) measured in the same run, plus the SQL
 * statements each request costs. Embedded PGlite by default; set DATABASE_URL to measure Postgres
 * (it must point at a database the benchmark may fill).
 *
 * Options (environment): BENCH_SECONDS (per scenario, default 3), BENCH_CONCURRENCY (default 8).
 */
import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../src/config';
import { createLogger } from '../src/logger';
import { startGateway } from '../src/main';
import { runBench } from './harness';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const PARTIALS = 100;
const VERSIONS_PER_PARTIAL = 3;

interface Scenario {
  name: string;
  request: () => Promise<Response>;
}

interface Result {
  name: string;
  perSecond: number;
  p50ms: number;
  p99ms: number;
  statementsPerRequest: number;
}

async function measure(scenario: Scenario, statements: { count: number }): Promise<Result> {
  const latencies: number[] = [];
  const deadline = Date.now() + SECONDS * 1000;
  const before = statements.count;
  const worker = async () => {
    while (Date.now() < deadline) {
      const start = performance.now();
      const res = await scenario.request();
      await res.arrayBuffer();
      if (!res.ok) throw new Error(`${scenario.name}: HTTP ${res.status}`);
      latencies.push(performance.now() - start);
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
  return {
    name: scenario.name,
    perSecond: latencies.length / elapsed,
    p50ms: at(0.5),
    p99ms: at(0.99),
    statementsPerRequest: (statements.count - before) / latencies.length,
  };
}

async function main(): Promise<void> {
  const key = `gw_bench_${randomBytes(16).toString('hex')}`;
  const config = loadConfig({ ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', GATEWAY_BOOTSTRAP_API_KEY: key });
  if (!config.databaseUrl) config.pgliteDir = 'memory://';
  const statements = { count: 0 };
  const gateway = await startGateway(config, createLogger('silent'), { onQuery: () => statements.count++ });
  const headers = { 'x-gateway-api-key': key, 'content-type': 'application/json' };
  const graphql = (query: string) => () => fetch(`${gateway.url}/graphql`, { method: 'POST', headers, body: JSON.stringify({ query }) });

  try {
    const run = randomBytes(3).toString('hex');
    for (let i = 0; i < PARTIALS; i++) {
      const created = await fetch(`${gateway.url}/v1/prompts/partials`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ name: `bench ${run} ${i}`, string: `Partial ${i}, version 1` }),
      });
      const { id } = (await created.json()) as { id: string };
      for (let v = 2; v <= VERSIONS_PER_PARTIAL; v++) {
        await fetch(`${gateway.url}/v1/prompts/partials/${id}`, { method: 'PUT', headers, body: JSON.stringify({ string: `Partial ${i}, version ${v}` }) });
      }
    }

    const scenarios: Scenario[] = [
      { name: 'GET /healthz (baseline)', request: () => fetch(`${gateway.url}/healthz`) },
      { name: 'GET /v1/labels', request: () => fetch(`${gateway.url}/v1/labels`, { headers }) },
      { name: 'GET /v1/prompts/partials', request: () => fetch(`${gateway.url}/v1/prompts/partials`, { headers }) },
      { name: 'GraphQL labels', request: graphql('{ labels { total items { id name colorCode } } }') },
      {
        name: `GraphQL ${PARTIALS} partials + versions`,
        request: graphql('{ promptPartials { id slug defaultVersion { version } versions { version string } } }'),
      },
    ];

    const results: Result[] = [];
    for (const scenario of scenarios) results.push(await measure(scenario, statements));
    const baseline = results[0].perSecond;

    console.log(`database: ${config.databaseUrl ? 'postgres' : 'pglite (in memory)'}; ${SECONDS}s per scenario, concurrency ${CONCURRENCY}`);
    console.table(
      results.map((r) => ({
        scenario: r.name,
        'req/s': Math.round(r.perSecond),
        'vs baseline': `${(r.perSecond / baseline).toFixed(3)}x`,
        'p50 ms': r.p50ms.toFixed(1),
        'p99 ms': r.p99ms.toFixed(1),
        'SQL/request': r.statementsPerRequest.toFixed(1),
      })),
    );
  } finally {
    await gateway.stop();
  }
}

// The migration engine leaves a timer pending: exit explicitly.
runBench(main);
