/**
 * The HTTP server against slow and departing clients, and its own departure: headers, request and
 * keep-alive timeouts come from configuration, so a client trickling its headers or body (slow loris)
 * is closed and cannot hold the server; on SIGTERM the process stops accepting connections, finishes
 * the requests in flight and exits; a stop with a job step still running hands the job back at once,
 * so another process takes it up long before its lease would expire.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { join } from 'node:path';
import { toFile } from 'openai';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import {
  createIntegration,
  createTestDatabase,
  dataset,
  eventually,
  newKey,
  sdk,
  startHostedGateway,
  tempDir,
  type HostedGateway,
} from '../fine-tuning/harness';
import type { TestDatabase } from '../support/database';
import { api, startTestGateway, useTestGateway } from '../support/gateway';
import { spawnGateway } from '../support/gateway-process';
import { startTcpProxy } from '../support/tcp-proxy';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A raw connection to the gateway: what it received, and when (ms after opening) it was closed. */
function rawSocket(url: string) {
  const { port } = new URL(url);
  const socket = net.connect(Number(port), '127.0.0.1');
  const opened = Date.now();
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
  socket.on('error', () => undefined);
  const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now() - opened)));
  return { socket, closed, received: () => received };
}

describe('slow clients', () => {
  const gw = useTestGateway({ GATEWAY_HEADERS_TIMEOUT_MS: '500', GATEWAY_REQUEST_TIMEOUT_MS: '1000', GATEWAY_KEEP_ALIVE_TIMEOUT_MS: '300' });

  it('closes a client sending its headers byte by byte (slow loris) while serving others', async () => {
    const loris = rawSocket(gw.url);
    const trickle = (async () => {
      const head = 'GET /healthz HTTP/1.1\r\nHost: gateway\r\nX-Slow: ' + 'a'.repeat(200);
      for (const byte of head) {
        if (loris.socket.destroyed) return;
        loris.socket.write(byte);
        await sleep(50);
      }
    })();
    // Others are served meanwhile.
    for (let i = 0; i < 3; i++) {
      expect((await api(gw, 'GET', '/healthz', { key: null })).status).toBe(200);
      await sleep(100);
    }
    const closedAfter = await loris.closed;
    await trickle;
    // The headers timeout (500 ms), enforced on a check every 500 ms: well before the 10 s the trickle would take.
    expect(closedAfter).toBeLessThan(2500);
    expect(loris.received()).toMatch(/^(HTTP\/1\.1 408|$)/);
  });

  it('closes a client trickling its body beyond the request timeout with 408', async () => {
    const slow = rawSocket(gw.url);
    slow.socket.write(
      `POST /v1/labels HTTP/1.1\r\nHost: gateway\r\nx-gateway-api-key: ${gw.key}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"na`,
    );
    const closedAfter = await slow.closed;
    expect(closedAfter).toBeLessThan(3000);
    expect(slow.received()).toMatch(/^HTTP\/1\.1 408/);
  });

  it('closes an idle keep-alive connection after the keep-alive timeout', async () => {
    const idle = rawSocket(gw.url);
    idle.socket.write('GET /healthz HTTP/1.1\r\nHost: gateway\r\nConnection: keep-alive\r\n\r\n');
    const closedAfter = await idle.closed;
    expect(idle.received()).toMatch(/^HTTP\/1\.1 200/);
    expect(closedAfter).toBeLessThan(2000);
  });

  it('refuses a headers timeout longer than the request timeout', async () => {
    await expect(startTestGateway({ GATEWAY_HEADERS_TIMEOUT_MS: '5000', GATEWAY_REQUEST_TIMEOUT_MS: '1000' })).rejects.toThrow(
      /GATEWAY_HEADERS_TIMEOUT_MS: must not exceed GATEWAY_REQUEST_TIMEOUT_MS/,
    );
  });
});

describe('graceful shutdown', () => {
  it('on SIGTERM stops accepting, finishes the request in flight, and exits 0', async () => {
    const data = await tempDir('gw-sigterm-');
    const database = await createTestDatabase();
    const key = newKey();
    let child: ChildProcess | undefined;
    try {
      const spawned = await spawnGateway({
        DATA_DIR: data.dir,
        GATEWAY_BOOTSTRAP_API_KEY: key,
        GATEWAY_SHUTDOWN_GRACE_MS: '10000',
        ...(database.databaseUrl ? { DATABASE_URL: database.databaseUrl } : {}),
      });
      child = spawned.child;
      const exited = new Promise<number | null>((resolve) => child!.once('exit', (code) => resolve(code)));
      const body = JSON.stringify({ name: 'created-during-shutdown' });
      const inFlight = rawSocket(spawned.url);
      inFlight.socket.write(
        `POST /v1/labels HTTP/1.1\r\nHost: gateway\r\nx-gateway-api-key: ${key}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`,
      );
      inFlight.socket.write(body.slice(0, 5));
      await sleep(300);
      const signalled = Date.now();
      child.kill('SIGTERM');
      await sleep(500);
      // No new connections once stopping.
      await expect(fetch(`${spawned.url}/healthz`)).rejects.toThrow();
      inFlight.socket.write(body.slice(5));
      await inFlight.closed;
      expect(inFlight.received()).toMatch(/^HTTP\/1\.1 200/);
      expect(inFlight.received()).toMatch(/"id":"[0-9a-f-]{36}"/);
      expect(await exited).toBe(0);
      expect(Date.now() - signalled).toBeLessThan(10_000);
    } finally {
      if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await database.drop();
      await data.remove();
    }
  }, 120_000);

  it('hands back the job of a step still running at the end of the grace period, and another process takes it up at once', async () => {
    const secret = `sk-fake-${randomBytes(12).toString('hex')}`;
    const fake: FakeOpenAI = await startFakeOpenAI({ apiKey: secret });
    // A's way to the provider goes through a proxy that hangs its upload; B reaches the provider directly.
    const link = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(fake.url).port) });
    const data = await tempDir('gw-handback-');
    // Two processes in turn on one database: a Postgres database, or one PGlite directory on disk.
    const database: TestDatabase = process.env.TEST_DATABASE_URL
      ? await createTestDatabase()
      : { kind: 'pglite', databaseUrl: undefined, pgliteDir: join(data.dir, 'pglite'), pgliteLoadDataDir: undefined, drop: async () => {} };
    const key = newKey();
    const leaseMs = 30_000;
    const env = { GATEWAY_JOB_LEASE_MS: String(leaseMs), GATEWAY_SHUTDOWN_GRACE_MS: '500' };
    let a: HostedGateway | undefined;
    let b: HostedGateway | undefined;
    try {
      a = await startHostedGateway({ fake, database, dataDir: data.dir, key, env: { ...env, GATEWAY_OPENAI_BASE_URL: link.via(fake.url) } });
      await createIntegration(a, 'handback-openai', secret);
      const file = await sdk(a).files.create({ file: await toFile(Buffer.from(dataset()), 'train.jsonl'), purpose: 'fine-tune' });
      await link.cut('hang');
      const created = await api(a, 'POST', '/v1/fine_tuning/jobs', {
        body: { model: 'gpt-4o-mini', training_file: file.id, gateway_options: { 'x-gateway-provider': '@handback-openai' } },
      });
      expect(created.status).toBe(200);
      const prisma = a.gateway.services.db.prisma;
      const owner = a.gateway.monitor.owner;
      // A claimed it and is stuck uploading the training file.
      await eventually(async () => ((await prisma.fineTuningJob.count({ where: { id: created.body.id, leaseOwner: owner } })) === 1 ? true : undefined));
      await sleep(200);

      const stopping = Date.now();
      await a.stop();
      expect(Date.now() - stopping).toBeLessThan(3000);
      expect(a.logs.some((line) => line.includes('their jobs were handed back'))).toBe(true);
      a = undefined;
      await link.close();

      b = await startHostedGateway({ fake, database, dataDir: data.dir, key, env });
      const started = Date.now();
      const job = await eventually(async () => {
        const res = await api(b!, 'GET', `/v1/fine_tuning/jobs/${created.body.id}`);
        return res.body.status === 'succeeded' ? res.body : undefined;
      });
      expect(job.id).toBe(created.body.id);
      expect(Date.now() - started).toBeLessThan(leaseMs / 2);
      expect(fake.state.createJobCalls).toBe(1);
    } finally {
      await a?.stop();
      await b?.stop();
      await link.close().catch(() => undefined);
      await database.drop();
      await fake.close();
      await data.remove();
    }
  }, 120_000);
});
