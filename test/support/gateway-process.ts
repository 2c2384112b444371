/**
 * Gateways as their own OS processes, for the tests of replicas (two processes on one Postgres) and
 * of signals: `spawnGateway` / `spawnReplica` start one and `stop()` ends it; `describeOnPostgres` and
 * `itOnPostgres` run such tests on Postgres only, saying in the skipped title why (the embedded
 * PGlite admits one process).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { projectRoot } from '../../src/db/migrations';
import { nodeArgs } from './compiled';

export interface GatewayProcess {
  child: ChildProcess;
  url: string;
  /** SIGTERM, resolved once the process has exited (at once if it already has). */
  stop(): Promise<void>;
}

/** The gateway as its own OS process (`src/main.ts` compiled, signals and all), resolving once it listens. */
export function spawnGateway(env: Record<string, string>): Promise<GatewayProcess> {
  const child = spawn(process.execPath, nodeArgs('src/main.ts'), {
    cwd: projectRoot(),
    env: { ...process.env, NODE_OPTIONS: '', PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /gateway listening on (http:\/\/[\d.:]+)/.exec(output);
      if (match) resolve({ child, url: match[1], stop: () => stop(child) });
    });
    child.once('exit', (code) => reject(new Error(`gateway process exited with ${code} before listening`)));
  });
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/** What replicas share: the database, the file store, the bootstrap API key, and where integrations are used, the master key and the fake OpenAI. */
export interface Replicated {
  databaseUrl: string;
  dataDir: string;
  key: string;
  masterKey?: string;
  openaiUrl?: string;
}

/** A gateway process on what `shared` names (`env` added), as a replica of another. */
export function spawnReplica(shared: Replicated, env: Record<string, string> = {}): Promise<GatewayProcess> {
  return spawnGateway({
    DATABASE_URL: shared.databaseUrl,
    DATA_DIR: shared.dataDir,
    GATEWAY_BOOTSTRAP_API_KEY: shared.key,
    ...(shared.masterKey ? { GATEWAY_MASTER_KEY: shared.masterKey } : {}),
    ...(shared.openaiUrl ? { GATEWAY_OPENAI_BASE_URL: shared.openaiUrl } : {}),
    ...env,
  });
}

const POSTGRES = process.env.TEST_DATABASE_URL;
const skippedTitle = (title: string) =>
  POSTGRES ? title : `${title} — skipped: needs Postgres (set TEST_DATABASE_URL); the embedded PGlite admits one process`;

/** A `describe` of several gateway processes on one database: Postgres only. */
export const describeOnPostgres = (title: string, body: () => void) => (POSTGRES ? describe : describe.skip)(skippedTitle(title), body);

/** An `it` of several gateway processes on one database: Postgres only. */
export const itOnPostgres = (title: string, body: () => Promise<void>, timeoutMs?: number) => (POSTGRES ? it : it.skip)(skippedTitle(title), body, timeoutMs);
