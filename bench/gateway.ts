/** A child of bench/client-mode.ts and bench/chat.ts: a gateway on the embedded database (or DATABASE_URL), its port reported to the parent. */
import 'reflect-metadata';
import { loadConfig } from '../src/config';
import { createLogger } from '../src/logger';
import { startGateway } from '../src/main';

const config = loadConfig({ ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent' });
void startGateway(config, createLogger('silent')).then((gateway) => process.send?.(Number(new URL(gateway.url).port)));
