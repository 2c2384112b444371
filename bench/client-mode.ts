/**
 * `npm run bench` (client-mode part): what forwarding through the gateway costs. The fake OpenAI and
 * the gateway each run in their own process (as in production, the load generator here does not share
 * the gateway's event loop); the same requests go to the fake directly and through the gateway in
 * client mode, in the same run:
 *
 *   - `GET /v1/fine_tuning/jobs`: requests per second at concurrency 1 and 50, and the latency the
 *     gateway adds at concurrency 1 (p50 through the gateway − p50 direct);
 *   - uploads of 256 and 512 MB (`POST /v1/files`, multipart, purpose after the file as the OpenAI SDK
 *     sends it), to the fake directly and through the gateway: MB/s, and the growth of the gateway's
 *     peak RSS (VmHWM, reset before each upload) over its resident size before the upload.
 *
 * Options (environment): BENCH_SECONDS (per scenario, default 3), BENCH_UPLOAD_MB (sizes, default
 * `256,512`), BENCH_CONCURRENCY (default `1,50`).
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { child, load, memoryOf, runBench, SECONDS, type Target } from './harness';

const UPLOAD_MB = (process.env.BENCH_UPLOAD_MB ?? '256,512').split(',').map(Number);
const PROVIDER_KEY = 'sk-bench-0123456789abcdef';

/** A valid JSONL dataset of just under `mb` megabytes (the gateway's default limit is 512 MiB), generated as it is sent. */
function dataset(mb: number): Readable {
  const line = Buffer.from(
    `${JSON.stringify({
      messages: [
        { role: 'user', content: 'x'.repeat(400) },
        { role: 'assistant', content: 'y'.repeat(400) },
      ],
    })}\n`,
  );
  const batch = Buffer.concat(Array.from({ length: 64 }, () => line));
  const batches = Math.floor((mb * 1024 * 1024) / batch.length);
  return Readable.from(
    (function* () {
      for (let sent = 0; sent < batches; sent++) yield batch;
    })(),
  );
}

/** Uploads a dataset of `mb` megabytes (multipart, as the OpenAI SDK sends it); MB/s. */
async function upload(port: number, headers: Record<string, string>, mb: number): Promise<number> {
  const boundary = `----bench${randomBytes(8).toString('hex')}`;
  const started = performance.now();
  const body = Readable.from(
    (async function* () {
      yield Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="bench.jsonl"\r\nContent-Type: application/octet-stream\r\n\r\n`,
      );
      for await (const chunk of dataset(mb)) yield chunk as Buffer;
      yield Buffer.from(`\r\n--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nfine-tune\r\n--${boundary}--\r\n`);
    })(),
  );
  await new Promise<void>((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, path: '/v1/files', method: 'POST', headers: { ...headers, 'content-type': `multipart/form-data; boundary=${boundary}` } },
      (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`upload: HTTP ${res.statusCode}`))));
      },
    );
    req.on('error', reject);
    body.pipe(req);
  });
  return mb / ((performance.now() - started) / 1000);
}

/** The upload through the gateway: MB/s, and the growth of the gateway's peak RSS during it over its resident size before. */
async function measuredUpload(
  port: number,
  headers: Record<string, string>,
  gatewayPid: number,
  mb: number,
): Promise<{ mbPerSecond: number; rssGrowthMb: number }> {
  // The peak so far may come from the request-rate phase before: reset it (Linux), so the growth is the upload's.
  writeFileSync(`/proc/${gatewayPid}/clear_refs`, '5');
  const before = memoryOf(gatewayPid).rss;
  const mbPerSecond = await upload(port, headers, mb);
  return { mbPerSecond, rssGrowthMb: (memoryOf(gatewayPid).peak - before) / (1024 * 1024) };
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'gw-bench-'));
  const key = `gw_bench_${randomBytes(16).toString('hex')}`;
  const fake = await child('fake-openai.js', { BENCH_PROVIDER_KEY: PROVIDER_KEY });
  const gateway = await child('gateway.js', { DATA_DIR: dataDir, GATEWAY_BOOTSTRAP_API_KEY: key, GATEWAY_OPENAI_BASE_URL: `http://127.0.0.1:${fake.port}/v1` });
  try {
    const direct: Target = { port: fake.port, path: '/v1/fine_tuning/jobs', headers: { authorization: `Bearer ${PROVIDER_KEY}` } };
    const clientMode = { 'x-gateway-api-key': key, 'x-gateway-provider': 'openai', authorization: `Bearer ${PROVIDER_KEY}` };
    const through: Target = { port: gateway.port, path: '/v1/fine_tuning/jobs', headers: clientMode };
    const rows = [];
    for (const concurrency of (process.env.BENCH_CONCURRENCY ?? '1,50').split(',').filter(Boolean).map(Number)) {
      const d = await load(direct, concurrency);
      const g = await load(through, concurrency);
      rows.push({
        concurrency,
        'direct req/s': Math.round(d.perSecond),
        'gateway req/s': Math.round(g.perSecond),
        'gateway/direct': `${(g.perSecond / d.perSecond).toFixed(2)}x`,
        'added p50 ms': (g.p50ms - d.p50ms).toFixed(2),
      });
    }
    console.log(`client mode, GET /v1/fine_tuning/jobs (fake OpenAI and gateway in their own processes; ${SECONDS}s each)`);
    console.table(rows);
    const uploads = [];
    for (const mb of UPLOAD_MB) {
      const direct = await upload(fake.port, { authorization: `Bearer ${PROVIDER_KEY}` }, mb);
      const through = await measuredUpload(gateway.port, clientMode, gateway.proc.pid ?? 0, mb);
      uploads.push({
        'file MB': mb,
        'direct MB/s': Math.round(direct),
        'gateway MB/s': Math.round(through.mbPerSecond),
        'gateway peak RSS growth MB': Math.round(through.rssGrowthMb),
      });
    }
    console.log("client-mode upload, POST /v1/files (growth: the gateway's peak RSS during each upload over its RSS before it)");
    console.table(uploads);
  } finally {
    fake.proc.kill();
    gateway.proc.kill();
    await rm(dataDir, { recursive: true, force: true });
  }
}

runBench(main);
