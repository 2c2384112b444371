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
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { child, runBench, SECONDS } from './harness';

const WORDS = Number(process.env.BENCH_CHAT_WORDS ?? 50);
const PROVIDER_KEY = 'sk-bench-0123456789abcdef';

interface Target {
  port: number;
  headers: Record<string, string>;
  model: string;
}

interface Sample {
  firstTokenMs: number;
  totalMs: number;
}

/** One streamed completion: when its first text chunk and its end arrived. */
function streamOnce(target: Target, agent: http.Agent, body: string): Promise<Sample> {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    let firstTokenMs = 0;
    const headers = { ...target.headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) };
    const req = http.request({ host: '127.0.0.1', port: target.port, path: '/v1/chat/completions', method: 'POST', headers, agent }, (res) => {
      if (res.statusCode !== 200) reject(new Error(`HTTP ${res.statusCode}`));
      res.on('data', (chunk: Buffer) => {
        if (!firstTokenMs && chunk.includes('"content":"A')) firstTokenMs = performance.now() - start;
      });
      res.on('end', () => resolve({ firstTokenMs, totalMs: performance.now() - start }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** `concurrency` keep-alive connections streaming completions for SECONDS. */
async function load(target: Target, concurrency: number) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const body = JSON.stringify({
    model: target.model,
    stream: true,
    messages: [{ role: 'user', content: Array.from({ length: WORDS }, (_, i) => `w${i}`).join(' ') }],
  });
  const samples: Sample[] = [];
  const deadline = Date.now() + SECONDS * 1000;
  const worker = async () => {
    while (Date.now() < deadline) samples.push(await streamOnce(target, agent, body));
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsed = (performance.now() - started) / 1000;
  agent.destroy();
  const p50 = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
  return { perSecond: samples.length / elapsed, firstTokenMs: p50(samples.map((s) => s.firstTokenMs)), totalMs: p50(samples.map((s) => s.totalMs)) };
}

/** A call to the gateway (setting up the hosted job): a JSON body, or a multipart form; fails loudly on anything but 200. */
async function call(port: number, key: string, method: string, route: string, body?: Record<string, unknown> | FormData): Promise<Record<string, unknown>> {
  const form = body instanceof FormData;
  const res = await fetch(`http://127.0.0.1:${port}${route}`, {
    method,
    headers: { 'x-gateway-api-key': key, ...(body === undefined || form ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined || form ? body : JSON.stringify(body),
  });
  if (res.status !== 200) throw new Error(`${method} ${route}: HTTP ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}

/** Runs a hosted job through the gateway and the fake to succeeded; its fine-tuned model. */
async function fineTunedModel(port: number, key: string): Promise<string> {
  await call(port, key, 'POST', '/v1/integrations', { slug: 'bench', provider: 'openai', credentials: { api_key: PROVIDER_KEY } });
  const example = JSON.stringify({
    messages: [
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello' },
    ],
  });
  const form = new FormData();
  form.append('purpose', 'fine-tune');
  form.append('file', new Blob([Array.from({ length: 10 }, () => example).join('\n')]), 'bench.jsonl');
  const file = await call(port, key, 'POST', '/v1/files', form);
  const job = { model: 'gpt-4o-mini-2024-07-18', training_file: file.id, gateway_options: { 'x-gateway-provider': '@bench' } };
  const { id } = await call(port, key, 'POST', '/v1/fine_tuning/jobs', job);
  for (let polls = 0; polls < 200; polls++) {
    const state = await call(port, key, 'GET', `/v1/fine_tuning/jobs/${String(id)}`);
    if (state.status === 'succeeded') return String(state.fine_tuned_model);
    if (state.status === 'failed' || state.status === 'cancelled') throw new Error(`bench job ${state.status}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('bench job did not finish');
}

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
    const model = await fineTunedModel(gateway.port, key);
    // Applications call with a workspace key (an organisation key costs a workspace lookup more).
    const workspaceKey = String((await call(gateway.port, key, 'POST', '/v1/api-keys', { name: 'bench', workspace_id: 'default' })).key);
    const targets: Record<string, Target> = {
      direct: { port: fake.port, headers: { authorization: `Bearer ${PROVIDER_KEY}` }, model },
      'provider mode': { port: gateway.port, headers: { 'x-gateway-api-key': workspaceKey }, model },
      'client mode': {
        port: gateway.port,
        headers: { 'x-gateway-api-key': workspaceKey, 'x-gateway-provider': 'openai', authorization: `Bearer ${PROVIDER_KEY}` },
        model,
      },
    };
    const rows = [];
    for (const concurrency of (process.env.BENCH_CONCURRENCY ?? '1,50').split(',').filter(Boolean).map(Number)) {
      const direct = await load(targets.direct, concurrency);
      rows.push({
        concurrency,
        path: 'direct',
        'streams/s': Math.round(direct.perSecond),
        'p50 first token ms': direct.firstTokenMs.toFixed(2),
        'p50 total ms': direct.totalMs.toFixed(2),
      });
      for (const name of ['provider mode', 'client mode']) {
        const through = await load(targets[name], concurrency);
        rows.push({
          concurrency,
          path: name,
          'streams/s': Math.round(through.perSecond),
          'of direct': `${Math.round((100 * through.perSecond) / direct.perSecond)}%`,
          'p50 first token ms': through.firstTokenMs.toFixed(2),
          'added first token ms': (through.firstTokenMs - direct.firstTokenMs).toFixed(2),
          'p50 total ms': through.totalMs.toFixed(2),
          'added total ms': (through.totalMs - direct.totalMs).toFixed(2),
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
