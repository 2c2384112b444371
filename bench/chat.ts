/**
 * `npm run bench` (chat part): what the gateway adds to a streamed chat completion. The fake OpenAI
 * and the gateway run in their own processes; the same streamed request goes, in the same run, to the
 * fake directly and through the gateway, in provider mode (a fine-tuned model of a succeeded hosted
 * job: job, integration and credentials looked up per request) and in client mode (headers):
 *
 *   - time to first token (the first `data:` event carrying text) and to the end of the stream, p50,
 *     and what the gateway adds to each at concurrency 1;
 *   - completed streams per second at concurrency 1 and 50, as a share of direct.
 *
 * Options (environment): BENCH_SECONDS (per scenario, default 3), BENCH_CONCURRENCY (default `1,50`),
 * BENCH_CHAT_WORDS (words in each answer, one chunk each; default 50).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { child, runBench, SECONDS, streamLoad, type Target } from './harness';
import { fineTunedModel, workspaceKey } from './hosted-model';

const WORDS = Number(process.env.BENCH_CHAT_WORDS ?? 50);
const PROVIDER_KEY = 'sk-bench-0123456789abcdef';

async function main(): Promise<void> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'gw-bench-chat-'));
  const key = `gw_bench_${randomBytes(16).toString('hex')}`;
  const fake = await child('fake-openai.js', { BENCH_PROVIDER_KEY: PROVIDER_KEY });
  const gateway = await child('gateway.js', {
    DATA_DIR: dataDir,
    GATEWAY_BOOTSTRAP_API_KEY: key,
    GATEWAY_OPENAI_BASE_URL: `http://127.0.0.1:${fake.port}/v1`,
    GATEWAY_JOB_POLL_MS: '50',
  });
  try {
    const model = await fineTunedModel(gateway.port, key, PROVIDER_KEY);
    const appKey = await workspaceKey(gateway.port, key);
    const body = JSON.stringify({
      model,
      stream: true,
      messages: [{ role: 'user', content: Array.from({ length: WORDS }, (_, i) => `w${i}`).join(' ') }],
    });
    const post = (port: number, headers: Record<string, string>): Target => ({
      port,
      path: '/v1/chat/completions',
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
      body,
    });
    const targets: Record<string, Target> = {
      direct: post(fake.port, { authorization: `Bearer ${PROVIDER_KEY}` }),
      'provider mode': post(gateway.port, { 'x-gateway-api-key': appKey }),
      'client mode': post(gateway.port, { 'x-gateway-api-key': appKey, 'x-gateway-provider': 'openai', authorization: `Bearer ${PROVIDER_KEY}` }),
    };
    const rows = [];
    for (const concurrency of (process.env.BENCH_CONCURRENCY ?? '1,50').split(',').filter(Boolean).map(Number)) {
      const direct = await streamLoad(targets.direct, concurrency);
      rows.push({
        concurrency,
        path: 'direct',
        'streams/s': Math.round(direct.perSecond),
        'p50 first token ms': direct.firstTokenP50ms.toFixed(2),
        'p50 total ms': direct.p50ms.toFixed(2),
      });
      for (const name of ['provider mode', 'client mode']) {
        const through = await streamLoad(targets[name], concurrency);
        rows.push({
          concurrency,
          path: name,
          'streams/s': Math.round(through.perSecond),
          'of direct': `${Math.round((100 * through.perSecond) / direct.perSecond)}%`,
          'p50 first token ms': through.firstTokenP50ms.toFixed(2),
          'added first token ms': (through.firstTokenP50ms - direct.firstTokenP50ms).toFixed(2),
          'p50 total ms': through.p50ms.toFixed(2),
          'added total ms': (through.p50ms - direct.p50ms).toFixed(2),
        });
      }
    }
    console.log(`chat, streamed POST /v1/chat/completions of ${WORDS + 3} chunks (fake OpenAI and gateway in their own processes; ${SECONDS}s each)`);
    console.table(rows);
  } finally {
    fake.proc.kill();
    gateway.proc.kill();
    await rm(dataDir, { recursive: true, force: true });
  }
}

runBench(main);
