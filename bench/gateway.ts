/** A child of the process-based benchmarks (client-mode.ts, chat.ts, reads.ts): a gateway on the embedded database (or DATABASE_URL), its port reported to the parent. */
import 'reflect-metadata';
import { loadConfig } from '../src/config';
import { createLogger } from '../src/logger';
import { startGateway } from '../src/main';
import { countStatementsForParent } from './statements';

if (process.env.BENCH_COUNT_STATEMENTS) countStatementsForParent();

const config = loadConfig({ ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent' });
void startGateway(config, createLogger('silent')).then((gateway) => process.send?.(Number(new URL(gateway.url).port)));
