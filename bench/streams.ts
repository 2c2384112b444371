/**
 * `npm run bench:streams`: many slow streams at once. The fake OpenAI sends one chunk every 100 ms, 53
 * per answer (a slow provider: each answer lasts about 5.5 s); 1 000 streamed chat completions run at
 * once (started over the first two seconds), first straight to the fake, then through the gateway in
 * client mode, each in its own process. Measured, in the same run:
 *
 *   - the gateway's resident memory: at rest before the wave (after a warm-up wave of 50, a full garbage
 *     collection and 3 s: the lowest RSS seen), its peak during the wave (VmHWM, reset before it), and at
 *     rest after it, with V8's heap and external memory (sampled every 250 ms during the wave) to tell
 *     JavaScript objects from buffers; the goal is a peak at most 100 MB above rest;
 *   - for every stream, the arrival of each event (its closing blank line): the gaps between two events
 *     (the provider's pace is 100 ms), their p99 and maximum over all streams, and the streams whose
 *     largest gap exceeds BENCH_STALL_MS (a stall; default 1 000 ms); every stream must end with
 *     `[DONE]` after as many events as direct;
 *   - how many streams were in flight and how many streaming (first event received) at once: a machine
 *     too busy to start them in time never has them all open, and the run says so; the time to the
 *     first event.
 *
 * Options (environment): BENCH_STREAMS (default 1000), BENCH_STREAM_DELAY_MS (default 100),
 * BENCH_STREAMS_RAMP_MS (default 2000), BENCH_STALL_MS (default 1000).
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { child, memoryOf, quantile, runBench, type Target } from './harness';

const STREAMS = Number(process.env.BENCH_STREAMS ?? 1000);
const DELAY_MS = Number(process.env.BENCH_STREAM_DELAY_MS ?? 100);
const RAMP_MS = Number(process.env.BENCH_STREAMS_RAMP_MS ?? 2000);
const STALL_MS = Number(process.env.BENCH_STALL_MS ?? 1000);
const GROWTH_LIMIT_MB = 100;
const SETTLE_MS = 3000;
const PROVIDER_KEY = 'sk-bench-0123456789abcdef';
const WORDS = 50;
const MB = 1024 * 1024;

/** One stream as the client saw it: when each event arrived (ms from the request), whether it ended with `[DONE]`, or why it failed. */
interface StreamTrace {
  events: number[];
  done: boolean;
  error?: string;
}

/** Streams in flight (request sent, not ended) and streaming (first event received, not ended), now and at most. */
class Occupancy {
  inFlight = 0;
  streaming = 0;
  maxInFlight = 0;
  maxStreaming = 0;
  change(field: 'inFlight' | 'streaming', by: number): void {
    this[field] += by;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    this.maxStreaming = Math.max(this.maxStreaming, this.streaming);
  }
}

/** One streamed completion on its own connection, timing each event's arrival; never rejects (a failure is part of the trace). */
function traceStream(target: Target, occupancy: Occupancy): Promise<StreamTrace> {
  return new Promise((resolve) => {
    const start = performance.now();
    const events: number[] = [];
    let pending = '';
    let last = '';
    occupancy.change('inFlight', 1);
    const end = (trace: StreamTrace) => {
      occupancy.change('inFlight', -1);
      if (events.length) occupancy.change('streaming', -1);
      resolve(trace);
    };
    const req = http.request({ host: '127.0.0.1', port: target.port, path: target.path, method: 'POST', headers: target.headers, agent: false }, (res) => {
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        const at = performance.now() - start;
        pending += chunk;
        for (let cut = pending.indexOf('\n\n'); cut >= 0; cut = pending.indexOf('\n\n')) {
          if (!events.length) occupancy.change('streaming', 1);
          events.push(at);
          last = pending.slice(0, cut);
          pending = pending.slice(cut + 2);
        }
      });
      res.on('end', () =>
        end({
          events,
          done: res.statusCode === 200 && pending === '' && last === 'data: [DONE]',
          error: res.statusCode === 200 ? undefined : `HTTP ${res.statusCode}`,
        }),
      );
    });
    req.on('error', (err) =>
      end({ events, done: false, error: `${err.message} ${events.length ? `after ${events.length} events` : 'before the first event'}` }),
    );
    req.end(target.body);
  });
}

/** STREAMS streams of `target`, their starts spread over RAMP_MS. */
async function wave(target: Target, count = STREAMS): Promise<{ traces: StreamTrace[]; occupancy: Occupancy }> {
  const occupancy = new Occupancy();
  const traces = await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      await new Promise((resolve) => setTimeout(resolve, (i * RAMP_MS) / count));
      return traceStream(target, occupancy);
    }),
  );
  return { traces, occupancy };
}

/** What the streams of a wave show: completeness, the gaps between events, the time to the first event. */
function summarise(traces: StreamTrace[], expectedEvents: number) {
  const gaps: number[] = [];
  let stalled = 0;
  for (const { events } of traces) {
    let largest = 0;
    for (let i = 1; i < events.length; i++) {
      gaps.push(events[i] - events[i - 1]);
      largest = Math.max(largest, events[i] - events[i - 1]);
    }
    if (largest > STALL_MS) stalled++;
  }
  gaps.sort((a, b) => a - b);
  const first = traces.map((t) => t.events[0] ?? Number.NaN).sort((a, b) => a - b);
  const errors = [...new Set(traces.flatMap((t) => (t.error ? [t.error] : [])))];
  return {
    complete: traces.filter((t) => t.done && t.events.length === expectedEvents).length,
    errors: errors.slice(0, 3).join('; '),
    stalled,
    p50GapMs: quantile(gaps, 0.5),
    p99GapMs: quantile(gaps, 0.99),
    maxGapMs: gaps.at(-1) ?? 0,
    p50FirstEventMs: quantile(first, 0.5),
    maxFirstEventMs: first.at(-1) ?? 0,
  };
}

/** The gateway's `process.memoryUsage()` (bench/gateway.ts), after a full collection when `request` is `gc`. */
function gatewayMemory(gateway: ChildProcess, request: 'memory' | 'gc'): Promise<NodeJS.MemoryUsage> {
  return new Promise((resolve) => {
    const onMessage = (message: unknown) => {
      if (typeof message !== 'object' || message === null || !('memory' in message)) return;
      gateway.off('message', onMessage);
      resolve(message.memory as NodeJS.MemoryUsage);
    };
    gateway.on('message', onMessage);
    gateway.send(request);
  });
}

/**
 * The gateway's memory at rest: a full collection, then the lowest RSS over the next SETTLE_MS (V8
 * and the allocator hand freed pages back some time after a collection; the lowest value makes the
 * growth measured from it the larger, never a hidden one).
 */
async function atRest(gateway: ChildProcess): Promise<NodeJS.MemoryUsage> {
  const usage = await gatewayMemory(gateway, 'gc');
  let rss = usage.rss;
  for (const until = Date.now() + SETTLE_MS; Date.now() < until; await new Promise((resolve) => setTimeout(resolve, 100))) {
    rss = Math.min(rss, memoryOf(gateway.pid ?? 0).rss);
  }
  return { ...usage, rss };
}

/** Samples the gateway's memory every 250 ms until the returned function is called; it gives the sample of the highest RSS. */
function sampleMemory(gateway: ChildProcess): () => Promise<NodeJS.MemoryUsage> {
  let sampling = true;
  let highest: NodeJS.MemoryUsage | undefined;
  const loop = (async () => {
    while (sampling) {
      const usage = await gatewayMemory(gateway, 'memory');
      if (!highest || usage.rss > highest.rss) highest = usage;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  })();
  return async () => {
    sampling = false;
    await loop;
    return highest ?? (await gatewayMemory(gateway, 'memory'));
  };
}

async function main(): Promise<void> {
  const started = new Date();
  const loadBefore = loadavg();
  const dataDir = await mkdtemp(path.join(tmpdir(), 'gw-bench-streams-'));
  const key = `gw_bench_${randomBytes(16).toString('hex')}`;
  const fake = await child('fake-openai.js', { BENCH_PROVIDER_KEY: PROVIDER_KEY, BENCH_STREAM_DELAY_MS: String(DELAY_MS) });
  const gatewayEnv = { DATA_DIR: dataDir, GATEWAY_BOOTSTRAP_API_KEY: key, GATEWAY_OPENAI_BASE_URL: `http://127.0.0.1:${fake.port}/v1` };
  const gateway = await child('gateway.js', gatewayEnv, ['--expose-gc']);
  try {
    const body = JSON.stringify({
      model: 'gpt-4o-mini',
      stream: true,
      messages: [{ role: 'user', content: Array.from({ length: WORDS }, (_, i) => `w${i}`).join(' ') }],
    });
    const auth = { authorization: `Bearer ${PROVIDER_KEY}`, 'content-type': 'application/json' };
    const direct: Target = { port: fake.port, path: '/v1/chat/completions', method: 'POST', headers: auth, body };
    const through: Target = { ...direct, port: gateway.port, headers: { ...auth, 'x-gateway-api-key': key, 'x-gateway-provider': 'openai' } };

    const directWave = await wave(direct);
    const expectedEvents = Math.max(...directWave.traces.map((t) => (t.done ? t.events.length : 0)));
    await wave(through, 50); // warm-up: the streaming path's modules loaded, its buffers allocated once
    const pid = gateway.proc.pid ?? 0;
    const before = await atRest(gateway.proc);
    // The peak so far comes from the start and the warm-up: reset it (Linux), so the peak is the wave's.
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    const stopSampling = sampleMemory(gateway.proc);
    const gatewayWave = await wave(through);
    const highest = await stopSampling();
    const peak = Math.max(memoryOf(pid).peak, highest.rss);
    const after = await atRest(gateway.proc);

    const rows = [
      { route: 'direct (fake provider)', ...summarise(directWave.traces, expectedEvents), ...directWave.occupancy },
      { route: 'gateway, client mode', ...summarise(gatewayWave.traces, expectedEvents), ...gatewayWave.occupancy },
    ];
    console.log(
      `bench:streams, ${started.toISOString()}; load average (1 / 5 / 15 min) ${loadBefore.map((v) => v.toFixed(2)).join(' / ')} at the start, ` +
        `${loadavg()
          .map((v) => v.toFixed(2))
          .join(' / ')} at the end`,
    );
    console.log(`${STREAMS} streamed chat completions at once (started over ${RAMP_MS} ms), ${expectedEvents} events each, one every ${DELAY_MS} ms`);
    console.table(
      rows.map((r) => ({
        route: r.route,
        'in flight at once': r.maxInFlight,
        'streaming at once': r.maxStreaming,
        complete: `${r.complete}/${STREAMS}`,
        [`stalled (gap > ${STALL_MS} ms)`]: r.stalled,
        'gap p50 ms': r.p50GapMs.toFixed(1),
        'gap p99 ms': r.p99GapMs.toFixed(1),
        'gap max ms': r.maxGapMs.toFixed(1),
        'first event p50 ms': r.p50FirstEventMs.toFixed(1),
        'first event max ms': r.maxFirstEventMs.toFixed(1),
      })),
    );
    for (const r of rows) if (r.errors) console.log(`${r.route}: failed streams: ${r.errors}`);
    const growth = (peak - before.rss) / MB;
    const { complete, stalled, maxGapMs, maxStreaming } = rows[1];
    const mb = (bytes: number) => `${(bytes / MB).toFixed(0)} MB`;
    const parts = (u: NodeJS.MemoryUsage) => `heap used ${mb(u.heapUsed)}, external ${mb(u.external)} (array buffers ${mb(u.arrayBuffers)})`;
    console.log(`gateway memory at rest before the wave: RSS ${mb(before.rss)}, ${parts(before)}; after it: RSS ${mb(after.rss)}, ${parts(after)}`);
    console.log(`during the wave: peak RSS ${mb(peak)}; at the highest sample, RSS ${mb(highest.rss)}, ${parts(highest)}`);
    console.log(`RSS growth ${growth.toFixed(1)} MB, ${((growth * 1024) / Math.max(1, maxStreaming)).toFixed(0)} KB per stream streaming at once`);
    // A machine too busy to start the streams fast enough never has them all open: the memory figure is then for fewer.
    const verdicts = [
      [`${STREAMS} streaming at once through the gateway`, maxStreaming === STREAMS, `${maxStreaming}`],
      [`RSS growth <= ${GROWTH_LIMIT_MB} MB`, growth <= GROWTH_LIMIT_MB, `${growth.toFixed(1)} MB`],
      [
        `every stream complete, none with a gap above ${STALL_MS} ms`,
        complete === STREAMS && stalled === 0,
        `${complete} complete, ${stalled} stalled, max gap ${maxGapMs.toFixed(1)} ms`,
      ],
    ] as const;
    console.table(verdicts.map(([goal, met, measured]) => ({ goal, measured, result: met ? 'pass' : 'FAIL' })));
  } finally {
    fake.proc.kill();
    gateway.proc.kill();
    await rm(dataDir, { recursive: true, force: true });
  }
}

runBench(main);
