/**
 * `npm run bench` (tool-call part, issue 22 §8): a streamed tool-call answer must cost the gateway no
 * more than a streamed text answer of the same length, in the same run. The fake OpenAI (its own
 * process) answers the same 50-word prompt either in text (53 content chunks) or, when the request
 * forces a tool, with one tool call whose arguments hold the prompt, streamed in pieces of 4 characters
 * (about a token each, as OpenAI streams them: 51 chunks of about the same bytes). Both go through the
 * gateway in client mode (its own process) and straight to the fake:
 *
 *   - streams per second and p50 time to the end of the stream, through the gateway and direct;
 *   - the gateway's CPU time per stream (its /proc counters around each scenario): the goal is a tool
 *     call at most 10 % above text (one run on a busy machine varies about that much).
 *
 * Options (environment): BENCH_SECONDS (per scenario, default 3), BENCH_CONCURRENCY (default `1,50`),
 * BENCH_CHAT_WORDS (words in the prompt, default 50).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { child, cpuMs, load, runBench, SECONDS, type Target } from './harness';

const WORDS = Number(process.env.BENCH_CHAT_WORDS ?? 50);
const PROVIDER_KEY = 'sk-bench-0123456789abcdef';
const PIECE_CHARS = 4;
const TOLERANCE = 1.1;

const ECHO_TOOL = {
  type: 'function',
  function: { name: 'echo', description: 'Repeats the text', parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } },
};

/** The chunks and bytes of one streamed answer of `target` (the two kinds must be of about one length). */
async function shapeOf(target: Target): Promise<{ chunks: number; bytes: number }> {
  const res = await fetch(`http://127.0.0.1:${target.port}${target.path}`, { method: 'POST', headers: target.headers, body: target.body });
  const events = (await res.text()).split('\n\n').filter((e) => e.startsWith('data: {'));
  return { chunks: events.length, bytes: events.reduce((sum, e) => sum + Buffer.byteLength(e), 0) };
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'gw-bench-tools-'));
  const key = `gw_bench_${randomBytes(16).toString('hex')}`;
  const fake = await child('fake-openai.js', { BENCH_PROVIDER_KEY: PROVIDER_KEY, BENCH_ARGUMENT_PIECE_CHARS: String(PIECE_CHARS) });
  const gateway = await child('gateway.js', { DATA_DIR: dataDir, GATEWAY_BOOTSTRAP_API_KEY: key, GATEWAY_OPENAI_BASE_URL: `http://127.0.0.1:${fake.port}/v1` });
  try {
    const prompt = Array.from({ length: WORDS }, (_, i) => `w${i}`).join(' ');
    const bodies = {
      text: { model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: prompt }] },
      'tool call': {
        model: 'gpt-4o-mini',
        stream: true,
        messages: [{ role: 'user', content: prompt }],
        tools: [ECHO_TOOL],
        tool_choice: { type: 'function', function: { name: 'echo' } },
      },
    };
    const post = (port: number, headers: Record<string, string>, body: unknown): Target => {
      const json = JSON.stringify(body);
      return { port, path: '/v1/chat/completions', method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: json };
    };
    const auth = { authorization: `Bearer ${PROVIDER_KEY}` };
    const through = { ...auth, 'x-gateway-api-key': key, 'x-gateway-provider': 'openai' };
    // Warm-up: the first streams pay for JIT compilation, which would count against whichever kind ran first.
    for (const kind of ['text', 'tool call'] as const) await load(post(gateway.port, through, bodies[kind]), 4, 1);
    const rows = [];
    const cpuPerStream: Record<string, number[]> = { text: [], 'tool call': [] };
    for (const concurrency of (process.env.BENCH_CONCURRENCY ?? '1,50').split(',').filter(Boolean).map(Number)) {
      for (const kind of ['text', 'tool call'] as const) {
        const direct = await load(post(fake.port, auth, bodies[kind]), concurrency);
        const cpuBefore = cpuMs(gateway.proc.pid!);
        const gw = await load(post(gateway.port, through, bodies[kind]), concurrency);
        const cpu = (cpuMs(gateway.proc.pid!) - cpuBefore) / gw.requests;
        cpuPerStream[kind].push(cpu);
        rows.push({
          concurrency,
          answer: kind,
          'direct streams/s': Math.round(direct.perSecond),
          'gateway streams/s': Math.round(gw.perSecond),
          'of direct': `${Math.round((100 * gw.perSecond) / direct.perSecond)}%`,
          'p50 total ms': gw.p50ms.toFixed(2),
          'gateway CPU ms/stream': cpu.toFixed(3),
        });
      }
    }
    const shapes = {
      text: await shapeOf(post(gateway.port, through, bodies.text)),
      tool: await shapeOf(post(gateway.port, through, bodies['tool call'])),
    };
    console.log(
      `streamed tool call vs streamed text through the gateway (client mode), same run; text ${shapes.text.chunks} chunks / ${shapes.text.bytes} B, ` +
        `tool call ${shapes.tool.chunks} chunks / ${shapes.tool.bytes} B per answer (${SECONDS}s each)`,
    );
    console.table(rows);
    const ratios = cpuPerStream['tool call'].map((tool, i) => tool / cpuPerStream.text[i]);
    const verdict = ratios.every((r) => r <= TOLERANCE) ? 'met' : 'NOT met';
    console.log(`gateway CPU per stream, tool call / text: ${ratios.map((r) => r.toFixed(2)).join(', ')} (goal ≤ ${TOLERANCE}: ${verdict})`);
  } finally {
    fake.proc.kill();
    gateway.proc.kill();
    await rm(dataDir, { recursive: true, force: true });
  }
}

runBench(main);
