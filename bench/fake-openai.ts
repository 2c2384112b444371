/** A child of bench/client-mode.ts and bench/chat.ts: the fake OpenAI server on a free port, reported to the parent. */
import { startFakeOpenAI } from '../test/fakes/openai-server';

void startFakeOpenAI({ apiKey: process.env.BENCH_PROVIDER_KEY }).then((fake) => process.send?.(Number(new URL(fake.url).port)));
