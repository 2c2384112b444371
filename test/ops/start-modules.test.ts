/**
 * A start loads what serving needs and nothing more: the AWS SDK (Bedrock, the S3 file store), the
 * HTTP client of provider calls (undici), the Redis client and the other kind of database's driver load
 * on first use; OpenTelemetry only when an OTLP endpoint is configured. Checked in a process of
 * its own, whose module cache shows what a start required.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { projectRoot } from '../../src/db/migrations';
import { compiled, nodeEvalArgs } from '../support/compiled';
import { createTestDatabase, type TestDatabase } from '../support/database';

/** Starts the gateway in a child on `database`, stops it, and answers the packages it had required. */
async function packagesLoadedByAStart(database: TestDatabase, dataDir: string): Promise<string[]> {
  const script = `
    require('reflect-metadata');
    const { startGateway } = require(${JSON.stringify(compiled('src/main.ts'))});
    const { loadConfig } = require(${JSON.stringify(compiled('src/config.ts'))});
    const { createLogger } = require(${JSON.stringify(compiled('src/logger.ts'))});
    (async () => {
      const config = { ...loadConfig(), pgliteDir: ${JSON.stringify(database.pgliteDir)} };
      const gateway = await startGateway(config, createLogger('silent'), { pgliteLoadDataDir: process.env.TEMPLATE || undefined });
      const loaded = Object.keys(require.cache);
      await gateway.stop();
      process.stdout.write('\\nrequired: ' + JSON.stringify(loaded) + '\\n');
    })().catch((err) => { console.error(err); process.exit(1); });`;
  const env: Record<string, string> = {
    ...process.env,
    NODE_OPTIONS: '',
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    TEMPLATE: database.pgliteLoadDataDir ?? '',
  };
  delete env.DATABASE_URL;
  if (database.databaseUrl) env.DATABASE_URL = database.databaseUrl;
  const child = spawn(process.execPath, nodeEvalArgs(script), { cwd: projectRoot(), env, stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise((resolve) => child.once('close', resolve));
  expect(code).toBe(0);
  // The first start also prints its new API key: the list is on a line of its own.
  const files = JSON.parse(/^required: (.*)$/m.exec(output)?.[1] ?? 'null') as string[];
  return [...new Set(files.map((file) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(file)?.[1]).filter((name): name is string => !!name))];
}

let dataDir: string;
let database: TestDatabase;

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'gw-start-'));
  database = await createTestDatabase();
});

afterAll(async () => {
  await database?.drop();
  await rm(dataDir, { recursive: true, force: true });
});

it(`starts without the AWS SDK, undici, the Redis client, OpenTelemetry or the unused database driver loaded`, async () => {
  const loaded = await packagesLoadedByAStart(database, dataDir);
  // What serving needs is there (the list is real)...
  expect(loaded).toEqual(expect.arrayContaining(['express', '@apollo/server', '@prisma/client']));
  // ...and what waits for first use is not.
  expect(loaded.filter((name) => name.startsWith('@aws-sdk/') || name === 'ioredis' || name === 'undici')).toEqual([]);
  // Without OTEL_EXPORTER_OTLP_ENDPOINT no OpenTelemetry module is loaded (src/telemetry/preload.ts): no SDK,
  // exporter or instrumentation. The API package alone is there because @prisma/client requires it itself (a
  // no-op without an SDK), as it did before the gateway had tracing.
  expect(loaded.filter((name) => name.startsWith('@opentelemetry/') && name !== '@opentelemetry/api')).toEqual([]);
  if (database.kind === 'pglite') {
    expect(loaded).toContain('@electric-sql/pglite');
    expect(loaded.filter((name) => name === 'pg' || name === '@prisma/adapter-pg')).toEqual([]);
  } else {
    expect(loaded).toEqual(expect.arrayContaining(['pg', '@prisma/adapter-pg']));
    expect(loaded.filter((name) => name.includes('pglite'))).toEqual([]);
  }
}, 60_000);
