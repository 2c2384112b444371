/**
 * A child of the process-based benchmarks: the fake OpenAI server on a free port, reported to the
 * parent. BENCH_STREAM_DELAY_MS paces streamed answers (a slow provider); BENCH_FAKE_STEPS_PER_POLL
 * lets a hosted job finish in fewer polls; BENCH_ARGUMENT_PIECE_CHARS streams tool-call arguments in
 * pieces of that many characters (bench/tool-calls.ts); BENCH_CHAT_DELAY_MS answers every chat
 * completion only after that long (a provider's fixed latency, bench/batches.ts).
 */
import { startFakeOpenAI } from '../test/fakes/openai-server';

void startFakeOpenAI({
  apiKey: process.env.BENCH_PROVIDER_KEY,
  streamDelayMs: Number(process.env.BENCH_STREAM_DELAY_MS ?? 0),
  stepsPerPoll: Number(process.env.BENCH_FAKE_STEPS_PER_POLL ?? 1),
  argumentPieceChars: process.env.BENCH_ARGUMENT_PIECE_CHARS ? Number(process.env.BENCH_ARGUMENT_PIECE_CHARS) : undefined,
}).then((fake) => {
  const chatDelayMs = Number(process.env.BENCH_CHAT_DELAY_MS ?? 0);
  if (chatDelayMs > 0) fake.delayNext('POST', '/v1/chat/completions', chatDelayMs, Number.POSITIVE_INFINITY);
  // Tests read what the fake received; a benchmark would only grow its heap (and its GC time) with it.
  setInterval(() => {
    fake.state.requests.length = 0;
    fake.state.chatRequests.length = 0;
  }, 1000).unref();
  process.send?.(Number(new URL(fake.url).port));
});
