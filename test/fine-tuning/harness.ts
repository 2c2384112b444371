import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gatewaySdk } from '../support/answers';
import type OpenAI from 'openai';
import { toFile } from 'openai';
import 'reflect-metadata';
import { loadConfig } from '../../src/config';
import { createLogger } from '../../src/logger';
import { startGateway, type RunningGateway } from '../../src/main';
import { AZURE_TEST_API_KEY } from '../fakes/azure-openai-server';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { api } from '../support/gateway';

/** A fixed master key (hex) so several gateway processes share the integration secrets. */
export const MASTER_KEY = randomBytes(32).toString('hex');

export interface HostedGateway {
  url: string;
  key: string;
  gateway: RunningGateway;
  database: TestDatabase;
  /** Every log line the gateway wrote (pino JSON, LOG_LEVEL=debug). */
  logs: string[];
  /** Stops the gateway (not the database, which the caller may share). */
  stop(): Promise<void>;
}

/**
 * A gateway whose providers are the fake OpenAI server, with a fast job monitor (50 ms polls) and
 * its logs captured. Several may share one database and DATA_DIR, as replicas behind a load balancer
 * share Postgres and a file store.
 */
export async function startHostedGateway(options: {
  fake: FakeOpenAI;
  database: TestDatabase;
  dataDir: string;
  key: string;
  env?: Record<string, string>;
  /** Receives every SQL statement (batching checks). */
  onQuery?: (sql: string) => void;
}): Promise<HostedGateway> {
  const logs: string[] = [];
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'debug',
    DATA_DIR: options.dataDir,
    GATEWAY_MASTER_KEY: MASTER_KEY,
    GATEWAY_BOOTSTRAP_API_KEY: options.key,
    GATEWAY_OPENAI_BASE_URL: options.fake.url,
    GATEWAY_JOB_POLL_MS: '50',
    ...(options.database.databaseUrl ? { DATABASE_URL: options.database.databaseUrl } : {}),
    ...options.env,
  });
  config.pgliteDir = options.database.pgliteDir;
  const logger = createLogger(config.logLevel, { write: (line: string) => void logs.push(line) });
  const gateway = await startGateway(config, logger, { onQuery: options.onQuery, pgliteLoadDataDir: options.database.pgliteLoadDataDir });
  return { url: gateway.url, key: options.key, gateway, database: options.database, logs, stop: () => gateway.stop() };
}

export async function tempDir(prefix: string): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

export const newKey = () => `gw_test_${randomBytes(16).toString('hex')}`;

export { createTestDatabase };

/** What the tests of hosted jobs on several gateways stand on: the fake OpenAI taking `apiKey`, a DATA_DIR, a database, a key. */
export interface HostedGround {
  fake: FakeOpenAI;
  dataDir: string;
  database: TestDatabase;
  key: string;
  /** Drops the database, stops the fake and removes the DATA_DIR. */
  close(): Promise<void>;
}

export async function hostedGround(dirPrefix: string, apiKey: string): Promise<HostedGround> {
  const fake = await startFakeOpenAI({ apiKey });
  const data = await tempDir(dirPrefix);
  const database = await createTestDatabase();
  const close = async () => {
    await database.drop();
    await fake.close();
    await data.remove();
  };
  return { fake, dataDir: data.dir, database, key: newKey(), close };
}

/** Raw response bodies the SDK received, to check what the gateway sent back. */
export function sdk(gw: { url: string; key: string }, seen: string[] = []): OpenAI {
  return gatewaySdk(gw, { onAnswer: (text) => seen.push(text) });
}

export const example = (n: number) =>
  JSON.stringify({
    messages: [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: `Question ${n}` },
      { role: 'assistant', content: `Answer ${n}` },
    ],
  });

export const dataset = (examples = 12) => Array.from({ length: examples }, (_, i) => example(i + 1)).join('\n') + '\n';

export interface OpenAIGateway {
  fake: FakeOpenAI;
  gw: HostedGateway;
  client: OpenAI;
  stop(): Promise<void>;
}

/** A hosted gateway beside the fake OpenAI, with the integration `@my-openai` holding `secret`. */
export async function startOpenAIGateway(secret: string, env: Record<string, string> = {}): Promise<OpenAIGateway> {
  const fake = await startFakeOpenAI({ apiKey: secret });
  const data = await tempDir('gw-openai-');
  const gw = await startHostedGateway({ fake, database: await createTestDatabase(), dataDir: data.dir, key: newKey(), env });
  await createIntegration(gw, 'my-openai', secret);
  return {
    fake,
    gw,
    client: sdk(gw),
    async stop() {
      await gw.stop();
      await gw.database.drop();
      await fake.close();
      await data.remove();
    },
  };
}

/**
 * The OpenAI gateway (startOpenAIGateway) of a whole test file or describe: started before its first
 * test, stopped after its last. The object answers once the start is done (read it in a test or a later
 * `beforeAll`).
 */
export function useOpenAIGateway(secret: string, env: Record<string, string> = {}): OpenAIGateway {
  const rig = {} as OpenAIGateway;
  beforeAll(async () => {
    Object.assign(rig, await startOpenAIGateway(secret, env));
  });
  afterAll(() => rig.stop());
  return rig;
}

/** A stored OpenAI integration whose key the fake accepts. */
export async function createIntegration(gw: { url: string; key: string }, slug: string, apiKey: string, key?: string) {
  const res = await api(gw, 'POST', '/v1/integrations', {
    body: { slug, provider: 'openai', name: slug, credentials: { api_key: apiKey }, options: {} },
    key,
  });
  if (res.status !== 200) throw new Error(`integration not created: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** A stored Azure OpenAI integration on the fake's `fake-aoai` resource, with the key the fake accepts. */
export async function createAzureIntegration(gw: { url: string; key: string }, slug: string) {
  const res = await api(gw, 'POST', '/v1/integrations', {
    body: { slug, provider: 'azure-openai', credentials: { api_key: AZURE_TEST_API_KEY }, options: { 'x-gateway-azure-resource-name': 'fake-aoai' } },
  });
  if (res.status !== 200) throw new Error(`integration not created: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Uploads one dataset and starts `count` hosted jobs on it through integration `slug`; their ids. */
export async function startHostedJobs(gw: { url: string; key: string }, slug: string, count: number): Promise<string[]> {
  const file = await sdk(gw).files.create({ file: await toFile(Buffer.from(dataset()), 'train.jsonl'), purpose: 'fine-tune' });
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const res = await api(gw, 'POST', '/v1/fine_tuning/jobs', {
      body: { model: 'gpt-4o-mini', training_file: file.id, suffix: `${slug}-${i}`, gateway_options: { 'x-gateway-provider': `@${slug}` } },
    });
    if (res.status !== 200) throw new Error(`job not created: ${res.status} ${JSON.stringify(res.body)}`);
    ids.push(res.body.id);
  }
  return ids;
}

/** A port nothing listens on: connections to it are refused (a provider that cannot be reached). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Kept here for the tests that import it from the harness; the one copy is test/support/expect.ts. */
export { eventually } from '../support/expect';

/** Every row of every table of the public schema, as text (to prove a secret is not stored in clear). */
export async function databaseText(gw: HostedGateway): Promise<string> {
  const prisma = gw.gateway.services.db.prisma;
  const tables = await prisma.$queryRawUnsafe<{ table_name: string }[]>(
    "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'",
  );
  const parts: string[] = [];
  for (const { table_name } of tables) {
    const rows = await prisma.$queryRawUnsafe<{ row: string }[]>(`SELECT row_to_json(t)::text AS row FROM "${table_name}" t`);
    parts.push(...rows.map((r) => r.row));
  }
  return parts.join('\n');
}
