/**
 * Postgres going away under a running gateway, through a TCP proxy that cuts the link the three ways
 * it happens (connection refused, reset, a link that hangs) and restores it: every request that needs
 * the database answers 503 `service_unavailable` with `Retry-After` within 5 s (REST and GraphQL),
 * `/readyz` 503 and `/healthz` 200, requests succeed again within 5 s of the restore without a restart,
 * and no connection leaks. Hosted jobs started before a cut all succeed, each created once at the
 * provider, and the job monitor logs its pause and resumption once each.
 *
 * Postgres only: the embedded PGlite runs inside the gateway's process and has no link to cut
 * (its one failure of this kind, a full disk, is described in docs/resilience.md).
 */
import { randomBytes } from 'node:crypto';
import {
  createIntegration,
  eventually,
  hostedGround,
  startHostedGateway,
  startHostedJobs,
  type HostedGateway,
  type HostedGround,
} from '../fine-tuning/harness';
import { adminQuery } from '../support/database';
import { api, gql } from '../support/gateway';
import { startTcpProxy, type CutMode, type TcpProxy } from '../support/tcp-proxy';

const POSTGRES = process.env.TEST_DATABASE_URL;
const SECRET = `sk-fake-${randomBytes(12).toString('hex')}`;
const JOBS = 6;
const CUT_MS = 3000;

const describePostgres = POSTGRES ? describe : describe.skip;
const title = 'Postgres outage through a TCP proxy';

describePostgres(POSTGRES ? title : `${title} — skipped: needs Postgres (set TEST_DATABASE_URL); the embedded PGlite has no link to cut`, () => {
  let ground: HostedGround;
  let proxy: TcpProxy;
  let gw: HostedGateway;
  const unhandled: unknown[] = [];
  /** Sees every SQL statement the gateway sends (to cut the link in the middle of a request). */
  let onStatement: ((sql: string) => void) | undefined;
  const onUnhandled = (reason: unknown) => void unhandled.push(reason);

  beforeAll(async () => {
    process.on('unhandledRejection', onUnhandled);
    ground = await hostedGround('gw-outage-', SECRET);
    const { fake, database, dataDir, key } = ground;
    const direct = new URL(database.databaseUrl!);
    proxy = await startTcpProxy({ host: direct.hostname, port: Number(direct.port || 5432) });
    gw = await startHostedGateway({
      fake,
      database: { ...database, databaseUrl: proxy.via(database.databaseUrl!) },
      dataDir,
      key,
      // Key cache off: every request then looks its key up first, which the resolver test uses to cut the
      // link between the context's statement and the resolver's.
      env: { GATEWAY_DB_CONNECT_TIMEOUT_MS: '1500', GATEWAY_DB_QUERY_TIMEOUT_MS: '3000', GATEWAY_KEY_CACHE_SIZE: '0' },
      onQuery: (sql) => onStatement?.(sql),
    });
    await createIntegration(gw, 'outage-openai', SECRET);
  });

  afterAll(async () => {
    process.off('unhandledRejection', onUnhandled);
    await gw?.stop();
    await proxy?.close();
    await ground?.close();
  });

  /** A request and how long its answer took. */
  async function timed<T>(request: () => Promise<T>): Promise<{ res: T; ms: number }> {
    const start = Date.now();
    const res = await request();
    return { res, ms: Date.now() - start };
  }

  it.each<CutMode>(['refuse', 'reset', 'hang'])('connections %s: 503 with Retry-After within 5 s on both faces, then recovery within 5 s', async (mode) => {
    expect((await api(gw, 'GET', '/v1/labels')).status).toBe(200);
    await proxy.cut(mode);
    try {
      for (let round = 0; round < 2; round++) {
        const rest = await timed(() => api(gw, 'GET', '/v1/labels'));
        expect(rest.res.status).toBe(503);
        expect(rest.ms).toBeLessThan(5000);
        expect(rest.res.headers.get('retry-after')).toMatch(/^\d+$/);
        expect(rest.res.body).toEqual({
          error: { type: 'service_unavailable', code: 'database_unavailable', param: null, message: expect.stringMatching(/temporarily unavailable/) },
        });
        // A database error never leaks its details (hosts, ports, SQL) into an answer.
        expect(JSON.stringify(rest.res.body)).not.toMatch(/127\.0\.0\.1|prisma|SELECT/i);

        const write = await timed(() => api(gw, 'POST', '/v1/labels', { body: { name: `outage-${mode}-${round}` } }));
        expect([write.res.status, write.res.headers.get('retry-after') !== null]).toEqual([503, true]);
        expect(write.ms).toBeLessThan(5000);

        const graphql = await timed(() => gql(gw, '{ labels { total } }'));
        expect(graphql.ms).toBeLessThan(5000);
        expect(graphql.res.status).toBe(503);
        expect(graphql.res.headers.get('retry-after')).toMatch(/^\d+$/);
        expect(graphql.res.body.errors[0].extensions.code).toBe('SERVICE_UNAVAILABLE');

        const ready = await timed(() => api(gw, 'GET', '/readyz', { key: null }));
        expect([ready.res.status, ready.ms < 2000]).toEqual([503, true]);
        expect(await api(gw, 'GET', '/healthz', { key: null })).toMatchObject({ status: 200, body: { status: 'ok' } });
      }
    } finally {
      await proxy.restore();
    }
    const restored = Date.now();
    await eventually(async () => ((await api(gw, 'GET', '/v1/labels')).status === 200 ? true : undefined), 5000, 100);
    expect(Date.now() - restored).toBeLessThan(5000);
    expect((await api(gw, 'GET', '/readyz', { key: null })).status).toBe(200);
    expect((await gql(gw, '{ labels { total } }')).body.data.labels.total).toBeGreaterThan(0);
    // Nothing created by the refused writes.
    expect((await api(gw, 'GET', `/v1/labels?search=outage-${mode}`)).body.data).toEqual([]);
  });

  it('a GraphQL resolver meeting the outage (the key already checked) answers 503 SERVICE_UNAVAILABLE with Retry-After', async () => {
    let cutting: Promise<void> | undefined;
    // The key has been looked up (the context is built): the resolver's statements meet the cut.
    onStatement = (sql) => {
      if (!cutting && sql.includes('"api_keys"')) cutting = proxy.cut('reset');
    };
    try {
      const res = await gql(gw, '{ labels { total items { id } } }');
      expect(cutting).toBeDefined();
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
      // Met by the resolver (the error has its path), not while building the context.
      expect(res.body.errors[0].path).toEqual(['labels']);
      expect(res.body.errors[0].extensions).toMatchObject({ code: 'SERVICE_UNAVAILABLE', errorCode: 'database_unavailable' });
    } finally {
      onStatement = undefined;
      await cutting;
      await proxy.restore();
    }
    await eventually(async () => ((await gql(gw, '{ labels { total } }')).status === 200 ? true : undefined), 5000, 100);
  });

  it('hosted jobs started before a cut all succeed, each created once; the monitor logs the pause and resumption once', async () => {
    const ids = await startHostedJobs(gw, 'outage-openai', JOBS);
    // Cut while the monitor is mid-way: some jobs submitted, some not.
    await eventually(async () => (ground.fake.state.createJobCalls >= 1 ? true : undefined), 10_000, 5);
    const logsBefore = gw.logs.length;
    await proxy.cut('reset');
    await new Promise((r) => setTimeout(r, CUT_MS));
    await proxy.restore();

    const prisma = gw.gateway.services.db.prisma;
    await eventually(
      async () => {
        const rows = await prisma.fineTuningJob.findMany({ where: { id: { in: ids } }, select: { status: true } }).catch(() => []);
        return rows.length === JOBS && rows.every((r) => r.status === 'succeeded') ? true : undefined;
      },
      30_000,
      100,
    );
    expect(ground.fake.state.createJobCalls).toBe(JOBS);
    const submittedFor = [...ground.fake.state.jobs.values()].map((j) => j.metadata?.gateway_job_id);
    expect([...submittedFor].sort()).toEqual([...ids].sort());
    const during = gw.logs.slice(logsBefore);
    expect(during.filter((line) => line.includes('job monitor paused'))).toHaveLength(1);
    expect(during.filter((line) => line.includes('job monitor resumed'))).toHaveLength(1);
    expect(during.filter((line) => line.includes('could not claim jobs'))).toHaveLength(0);
  });

  it('leaks no connection and no unhandled rejection across the outages', async () => {
    const name = new URL(ground.database.databaseUrl!).pathname.slice(1);
    // node-postgres's pool holds at most 10 connections; the outages left none behind beyond that.
    const rows = await adminQuery(POSTGRES!, 'SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1', [name]);
    expect(Number(rows[0].n)).toBeLessThanOrEqual(10);
    expect(unhandled).toEqual([]);
  });
});
