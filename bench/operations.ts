/**
 * `npm run bench:ops`: what the operating features cost, against in-process gateways on loopback
 * (embedded PGlite unless DATABASE_URL is set):
 * - `GET /v1/labels` with no rate limit, the in-memory limiter and the Redis limiter (REDIS_URL or a
 *   local Redis; skipped when none answers); the limit is set high enough never to refuse;
 * - `POST /v1/labels` with and without a fresh `Idempotency-Key` (claim, seal and record per request);
 * - one 64 MiB fine-tune upload to the local store and to an S3-compatible one (s3rver on a temp dir).
 *
 * Options (environment): BENCH_SECONDS (per scenario, default 3), BENCH_CONCURRENCY (default 8),
 * BENCH_UPLOAD_MB (default 64).
 */
import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { loadConfig } from '../src/config';
import { createLogger } from '../src/logger';
import { startGateway, type RunningGateway } from '../src/main';
import { runBench } from './harness';

// s3rver ships no types: the little used here is typed by hand.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const S3rver = require('s3rver') as new (options: Record<string, unknown>) => { run(): Promise<{ port: number }>; close(): Promise<void> };

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const UPLOAD_MB = Number(process.env.BENCH_UPLOAD_MB ?? 64);
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

interface Bench {
  gateway: RunningGateway;
  key: string;
  stop(): Promise<void>;
}

async function start(env: Record<string, string>): Promise<Bench> {
  const key = `gw_bench_${randomBytes(16).toString('hex')}`;
  const dataDir = await mkdtemp(join(tmpdir(), 'gw-bench-ops-'));
  const config = loadConfig({ ...process.env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', GATEWAY_BOOTSTRAP_API_KEY: key, ...env });
  if (!config.databaseUrl) config.pgliteDir = 'memory://';
  const gateway = await startGateway(config, createLogger('silent'));
  return {
    gateway,
    key,
    async stop() {
      await gateway.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Requests per second and median latency of `request` from CONCURRENCY workers for SECONDS. */
async function measure(request: () => Promise<Response>): Promise<{ perSecond: number; p50ms: number }> {
  const latencies: number[] = [];
  const deadline = Date.now() + SECONDS * 1000;
  const worker = async () => {
    while (Date.now() < deadline) {
      const started = performance.now();
      const res = await request();
      await res.arrayBuffer();
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      latencies.push(performance.now() - started);
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  latencies.sort((a, b) => a - b);
  return { perSecond: latencies.length / ((performance.now() - started) / 1000), p50ms: latencies[Math.floor(latencies.length / 2)] };
}

async function redisAnswers(): Promise<boolean> {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  try {
    await redis.connect();
    return (await redis.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

async function rateLimitRows(): Promise<Record<string, unknown>[]> {
  const variants: [string, Record<string, string>][] = [
    ['no rate limit', {}],
    ['rate limit, in memory', { GATEWAY_RATE_LIMIT_PER_MINUTE: '1000000000' }],
  ];
  if (await redisAnswers())
    variants.push([
      'rate limit, Redis',
      { GATEWAY_RATE_LIMIT_PER_MINUTE: '1000000000', REDIS_URL, GATEWAY_REDIS_KEY_PREFIX: `bench:${randomBytes(4).toString('hex')}` },
    ]);
  const rows = [];
  for (const [name, env] of variants) {
    const bench = await start(env);
    try {
      const headers = { 'x-gateway-api-key': bench.key };
      const { perSecond, p50ms } = await measure(() => fetch(`${bench.gateway.url}/v1/labels`, { headers }));
      rows.push({ scenario: `GET /v1/labels, ${name}`, 'req/s': Math.round(perSecond), 'p50 ms': p50ms.toFixed(1) });
    } finally {
      await bench.stop();
    }
  }
  return rows;
}

async function idempotencyRows(): Promise<Record<string, unknown>[]> {
  const bench = await start({});
  try {
    const rows = [];
    for (const withKey of [false, true]) {
      const { perSecond, p50ms } = await measure(() =>
        fetch(`${bench.gateway.url}/v1/labels`, {
          method: 'POST',
          headers: {
            'x-gateway-api-key': bench.key,
            'content-type': 'application/json',
            ...(withKey ? { 'idempotency-key': randomBytes(12).toString('hex') } : {}),
          },
          body: JSON.stringify({ name: `bench-${randomBytes(8).toString('hex')}` }),
        }),
      );
      rows.push({
        scenario: `POST /v1/labels, ${withKey ? 'fresh Idempotency-Key' : 'no Idempotency-Key'}`,
        'req/s': Math.round(perSecond),
        'p50 ms': p50ms.toFixed(1),
      });
    }
    return rows;
  } finally {
    await bench.stop();
  }
}

/** A valid fine-tune dataset of about `mb` MiB, as one buffer. */
function dataset(mb: number): Buffer {
  const line =
    JSON.stringify({
      messages: [
        { role: 'user', content: 'x'.repeat(900) },
        { role: 'assistant', content: 'y' },
      ],
    }) + '\n';
  return Buffer.from(line.repeat(Math.ceil((mb * 1024 * 1024) / line.length)));
}

async function uploadRows(): Promise<Record<string, unknown>[]> {
  const s3Dir = await mkdtemp(join(tmpdir(), 'gw-bench-s3-'));
  const s3 = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: s3Dir, configureBuckets: [{ name: 'bench' }] });
  const { port } = await s3.run();
  const content = dataset(UPLOAD_MB);
  const s3Env = {
    GATEWAY_FILE_STORE: 's3://bench/files',
    GATEWAY_FILE_STORE_ENDPOINT: `http://127.0.0.1:${port}`,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'S3RVER',
    AWS_SECRET_ACCESS_KEY: 'S3RVER',
  };
  const rows = [];
  try {
    for (const [name, env] of [
      ['local', {}],
      ['s3 (s3rver)', s3Env],
    ] as const) {
      const bench = await start(env);
      try {
        const form = new FormData();
        form.append('purpose', 'fine-tune');
        form.append('file', new Blob([new Uint8Array(content)]), 'bench.jsonl');
        const started = performance.now();
        const res = await fetch(`${bench.gateway.url}/v1/files`, { method: 'POST', headers: { 'x-gateway-api-key': bench.key }, body: form });
        const { id } = (await res.json()) as { id: string };
        const uploadS = (performance.now() - started) / 1000;
        const readStarted = performance.now();
        const download = await fetch(`${bench.gateway.url}/v1/files/${id}/content`, { headers: { 'x-gateway-api-key': bench.key } });
        const bytes = (await download.arrayBuffer()).byteLength;
        const downloadS = (performance.now() - readStarted) / 1000;
        if (!res.ok || bytes !== content.length) throw new Error(`${name}: upload ${res.status}, downloaded ${bytes} of ${content.length} bytes`);
        const mb = content.length / 1024 / 1024;
        rows.push({ store: name, MiB: Math.round(mb), 'upload MiB/s': (mb / uploadS).toFixed(0), 'download MiB/s': (mb / downloadS).toFixed(0) });
      } finally {
        await bench.stop();
      }
    }
  } finally {
    await s3.close();
    await rm(s3Dir, { recursive: true, force: true });
  }
  return rows;
}

async function main(): Promise<void> {
  console.log(`database: ${process.env.DATABASE_URL ? 'postgres' : 'pglite (in memory)'}; ${SECONDS}s per scenario, concurrency ${CONCURRENCY}`);
  console.table([...(await rateLimitRows()), ...(await idempotencyRows())]);
  console.table(await uploadRows());
}

// The migration engine leaves a timer pending: exit explicitly.
runBench(main);
