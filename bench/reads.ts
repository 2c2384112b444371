/**
 * `npm run bench` (reads part): one label read, `GET /v1/labels/{id}` and GraphQL `label(id)`, through
 * the gateway, against a bare `node:http` + `pg` server answering the same indexed query, in the same
 * run on the same Postgres. Each server runs in its own process, the load generator in this one; the
 * SQL statements each request costs are counted in the servers (every `pg` query) and printed beside
 * each figure. The bare server is measured before and after the gateway, and the ratios use the mean.
 * Two more servers (bench/prisma-reads.ts) show where the gap comes from: the same read through Prisma
 * behind a bare `node:http` handler, and behind a bare Express route. The goals (issue 24) are ratios
 * to the last: REST >= 0.9x and GraphQL >= 0.8x its requests per second, printed met or not.
 *
 * Postgres: BENCH_DATABASE_URL (default postgresql://postgres@127.0.0.1:5432/postgres) is where a
 * scratch database is created and dropped afterwards. Options (environment): BENCH_SECONDS (per
 * scenario, default 3), BENCH_READ_CONCURRENCY (default 50), BENCH_CPU_PROF (a directory: the gateway
 * runs with `--cpu-prof` and writes its profile there).
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { adminQuery, child, cpuMs, load, runBench, SECONDS, statements, stop, type Target } from './harness';

const SERVER_URL = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const CONCURRENCY = Number(process.env.BENCH_READ_CONCURRENCY ?? 50);
const LABEL_FIELDS = 'id name description colorCode organisationId workspaceId isUniversal status createdAt lastUpdatedAt';

interface Measured {
  perSecond: number;
  p50ms: number;
  perRequest: number;
  cpuMsPerRequest: number;
}

/**
 * Requests per second of `target` at CONCURRENCY (after a one-second warm-up), with the statements and
 * the server's CPU time per request: on a shared machine the CPU cost is the steadier figure.
 */
async function measure(server: ChildProcess, target: Target): Promise<Measured> {
  await load(target, CONCURRENCY, 1);
  const before = await statements(server);
  const cpuBefore = cpuMs(server.pid!);
  const result = await load(target, CONCURRENCY);
  const cpu = cpuMs(server.pid!) - cpuBefore;
  return { ...result, perRequest: ((await statements(server)) - before) / result.requests, cpuMsPerRequest: cpu / result.requests };
}

async function main(): Promise<void> {
  const database = `gw_bench_reads_${randomBytes(4).toString('hex')}`;
  const databaseUrl = Object.assign(new URL(SERVER_URL), { pathname: `/${database}` }).toString();
  const dataDir = await mkdtemp(path.join(tmpdir(), 'gw-bench-reads-'));
  const key = `gw_bench_${randomBytes(16).toString('hex')}`;
  const loadBefore = loadavg()[0];
  const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(process.env.BENCH_CPU_PROF)] : [];
  await adminQuery(SERVER_URL, `CREATE DATABASE ${database}`);
  const children: ChildProcess[] = [];
  try {
    const gatewayEnv = {
      DATABASE_URL: databaseUrl,
      DATA_DIR: dataDir,
      GATEWAY_BOOTSTRAP_API_KEY: key,
      BENCH_COUNT_STATEMENTS: '1',
      // No background job polling while measuring: only the requests' statements are counted.
      GATEWAY_JOB_POLL_MS: '3600000',
    };
    const gateway = await child('gateway.js', gatewayEnv, profile);
    children.push(gateway.proc);
    const headers = { 'x-gateway-api-key': key, 'content-type': 'application/json' };
    const created = await fetch(`http://127.0.0.1:${gateway.port}/v1/labels`, { method: 'POST', headers, body: JSON.stringify({ name: 'bench-label' }) });
    const { id } = (await created.json()) as { id: string };
    const label = (await (await fetch(`http://127.0.0.1:${gateway.port}/v1/labels/${id}`, { headers })).json()) as Record<string, string>;
    const bare = await child('bare-reads.js', {
      DATABASE_URL: databaseUrl,
      BENCH_ORGANISATION_ID: label.organisation_id,
      BENCH_WORKSPACE_ID: label.workspace_id,
    });
    children.push(bare.proc);
    const floorEnv = (floor: string) => ({
      DATABASE_URL: databaseUrl,
      BENCH_ORGANISATION_ID: label.organisation_id,
      BENCH_WORKSPACE_ID: label.workspace_id,
      BENCH_FLOOR: floor,
    });
    const httpPrisma = await child('prisma-reads.js', floorEnv('http'));
    const expressPrisma = await child('prisma-reads.js', floorEnv('express'));
    children.push(httpPrisma.proc, expressPrisma.proc);

    const graphqlBody = JSON.stringify({ query: `query Label($id: ID!) { label(id: $id) { ${LABEL_FIELDS} } }`, variables: { id } });
    const bareBefore = await measure(bare.proc, { port: bare.port, path: `/labels/${id}`, headers: {} });
    const rest = await measure(gateway.proc, { port: gateway.port, path: `/v1/labels/${id}`, headers });
    const graphql = await measure(gateway.proc, { port: gateway.port, path: '/graphql', method: 'POST', headers, body: graphqlBody });
    const viaHttp = await measure(httpPrisma.proc, { port: httpPrisma.port, path: `/v1/labels/${id}`, headers: {} });
    const viaExpress = await measure(expressPrisma.proc, { port: expressPrisma.port, path: `/v1/labels/${id}`, headers: {} });
    const bareAfter = await measure(bare.proc, { port: bare.port, path: `/labels/${id}`, headers: {} });
    const floor = (bareBefore.perSecond + bareAfter.perSecond) / 2;

    const bareCpu = (bareBefore.cpuMsPerRequest + bareAfter.cpuMsPerRequest) / 2;
    const row = (scenario: string, r: Measured) => ({
      scenario,
      'req/s': Math.round(r.perSecond),
      'vs bare': `${(r.perSecond / floor).toFixed(2)}x`,
      'vs Express+Prisma': `${(r.perSecond / viaExpress.perSecond).toFixed(2)}x`,
      'p50 ms': r.p50ms.toFixed(1),
      'SQL/request': r.perRequest.toFixed(2),
      'server CPU ms/request': r.cpuMsPerRequest.toFixed(3),
      'CPU vs bare': `${(r.cpuMsPerRequest / bareCpu).toFixed(1)}x`,
    });
    console.log(
      `label read at ${CONCURRENCY} connections, ${SECONDS}s each, Postgres, servers in their own processes; ` +
        `1-min load average before/after ${loadBefore.toFixed(2)}/${loadavg()[0].toFixed(2)} (the machine may be shared: compare ratios, not absolutes)`,
    );
    console.table([
      row('bare node:http + pg (before)', bareBefore),
      row('gateway GET /v1/labels/{id}', rest),
      row('gateway GraphQL label(id)', graphql),
      row('node:http + Prisma (no gateway)', viaHttp),
      row('Express + Prisma (no gateway)', viaExpress),
      row('bare node:http + pg (after)', bareAfter),
    ]);
    // Issue 24's goals, against the same read through Express + Prisma alone in this run.
    const goal = (name: string, r: Measured, min: number) => {
      const ratio = r.perSecond / viaExpress.perSecond;
      const cpu = r.cpuMsPerRequest / viaExpress.cpuMsPerRequest;
      console.log(
        `${name}: ${ratio.toFixed(2)}x Express+Prisma's req/s (goal >= ${min}x: ${ratio >= min ? 'met' : 'NOT met'}), CPU/request ${cpu.toFixed(2)}x its`,
      );
    };
    goal('GET /v1/labels/{id}', rest, 0.9);
    goal('GraphQL label(id)', graphql, 0.8);
  } finally {
    await Promise.all(children.map(stop));
    await rm(dataDir, { recursive: true, force: true });
    await adminQuery(SERVER_URL, `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  }
}

runBench(main);
