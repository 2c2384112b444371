/** A child of the process-based benchmarks (client-mode.ts, chat.ts, reads.ts, chaos.ts, peer.ts, streams.ts): a gateway on the embedded database (or DATABASE_URL), its port reported to the parent. */
import 'reflect-metadata';
import { loadConfig } from '../src/config';
import { createLogger } from '../src/logger';
import { startGateway } from '../src/main';
import { countStatementsForParent } from './statements';

const count = process.env.BENCH_COUNT_STATEMENTS ? countStatementsForParent() : undefined;

// bench/streams.ts reads the memory figures, some from a collected heap (it starts this process with --expose-gc).
process.on('message', (message) => {
  if (message === 'gc') global.gc?.();
  if (message === 'gc' || message === 'memory') process.send?.({ memory: process.memoryUsage() });
});

// Silent unless the parent wants the log (bench/chaos.ts counts the job monitor's pause and resume lines).
const config = loadConfig({ ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: process.env.BENCH_GATEWAY_LOG_LEVEL ?? 'silent' });
// On Postgres the pg client counts; on PGlite, Prisma's query events.
const options = count && !config.databaseUrl ? { onQuery: count } : {};
void startGateway(config, createLogger(config.logLevel), options).then((gateway) => process.send?.(Number(new URL(gateway.url).port)));
