import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import 'reflect-metadata';
import { loadConfig, type Config } from '../../src/config';
import { createLogger } from '../../src/logger';
import { startGateway, type RunningGateway } from '../../src/main';
import { createTestDatabase, type TestDatabase } from './database';
import { gatewayFetch } from './answers';
import { expectError } from './expect';

export interface TestGateway {
  url: string;
  /** The bootstrap organisation key. */
  key: string;
  gateway: RunningGateway;
  database: TestDatabase;
  config: Config;
  stop(): Promise<void>;
}

/**
 * A gateway on port 0 over a fresh database, bootstrapped with a known organisation key.
 * `options.onQuery` receives every SQL statement Prisma sends (statement counting). Without a
 * DATA_DIR in env it gets a temporary one (files, master key), removed on stop, so tests never touch
 * the project's ./.data.
 */
export async function startTestGateway(
  env: Record<string, string> = {},
  options: { onQuery?: (sql: string) => void; /** Receives every log line (LOG_LEVEL debug). */ logs?: string[] } = {},
): Promise<TestGateway> {
  const { reuseDatabase, ...overrides } = env;
  env = overrides;
  const database: TestDatabase = reuseDatabase
    ? { kind: env.DATABASE_URL ? 'postgres' : 'pglite', databaseUrl: env.DATABASE_URL, pgliteDir: '', pgliteLoadDataDir: undefined, drop: async () => {} }
    : await createTestDatabase();
  const key = env.GATEWAY_BOOTSTRAP_API_KEY ?? `gw_test_${randomBytes(16).toString('hex')}`;
  const ownDataDir = env.DATA_DIR ? undefined : mkdtempSync(join(tmpdir(), 'gw-test-'));
  const config = loadConfig({
    ...(ownDataDir ? { DATA_DIR: ownDataDir } : {}),
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: options.logs ? 'debug' : (process.env.TEST_LOG_LEVEL ?? 'silent'),
    GATEWAY_BOOTSTRAP_API_KEY: key,
    ...(database.databaseUrl ? { DATABASE_URL: database.databaseUrl } : {}),
    ...env,
  });
  if (database.pgliteDir) config.pgliteDir = database.pgliteDir;
  const logs = options.logs;
  const logger = logs ? createLogger(config.logLevel, { write: (line: string) => void logs.push(line) }) : createLogger(config.logLevel);
  const gateway = await startGateway(config, logger, { onQuery: options.onQuery, pgliteLoadDataDir: database.pgliteLoadDataDir });
  return {
    url: gateway.url,
    key,
    gateway,
    database,
    config,
    async stop() {
      await gateway.stop();
      await database.drop();
      if (ownDataDir) rmSync(ownDataDir, { recursive: true, force: true });
    },
  };
}

/**
 * A gateway (startTestGateway with `env`) started before the tests of the enclosing file or describe
 * and stopped after them. The answer stands for it from the start: its fields read the running
 * gateway, so inside the tests it is used like the gateway itself (`api(gw, …)`, `gw.url`).
 */
export function useTestGateway(env: Record<string, string> = {}): TestGateway {
  let started: TestGateway | undefined;
  const running = (): TestGateway => {
    if (!started) throw new Error('useTestGateway: the gateway starts in beforeAll; use it inside the tests');
    return started;
  };
  beforeAll(async () => {
    started = await startTestGateway(env);
  });
  afterAll(() => started?.stop());
  return {
    get url() {
      return running().url;
    },
    get key() {
      return running().key;
    },
    get gateway() {
      return running().gateway;
    },
    get database() {
      return running().database;
    },
    get config() {
      return running().config;
    },
    stop: () => running().stop(),
  };
}

export interface ApiResponse<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

/** A JSON request to the gateway; `key: null` sends none. */
export async function api<T = any>(
  gw: { url: string; key: string },
  method: string,
  path: string,
  options: { body?: unknown; key?: string | null; headers?: Record<string, string>; rawBody?: string } = {},
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  const key = options.key === undefined ? gw.key : options.key;
  if (key !== null) headers['x-gateway-api-key'] = key;
  let body: string | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  // Every REST answer a test receives is checked against openapi.yaml and OpenAI's document (test/support/answers.ts).
  const res = await gatewayFetch(gw.url + path, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // Non-JSON answers (raw file content, metrics) stay text.
  }
  // And, like every answer of the gateway, tells browsers not to guess its type.
  if (res.headers.get('x-content-type-options') !== 'nosniff')
    throw new Error(`${method} ${path} answered ${res.status} without X-Content-Type-Options: nosniff`);
  return { status: res.status, body: parsed as T, headers: res.headers };
}

/**
 * A POST to `path` whose body is no JSON object is refused in the error shape with no param: broken
 * JSON and a JSON array with 400, another content type with 415 (every JSON route parses the same way).
 */
export async function expectNonObjectBodiesRefused(gw: { url: string; key: string }, path: string): Promise<void> {
  const post = (rawBody: string, contentType = 'application/json') => api(gw, 'POST', path, { rawBody, headers: { 'content-type': contentType } });
  const refused = { type: 'invalid_request_error', param: null };
  expectError(await post('{"name": '), 400, refused);
  expectError(await post('["a"]'), 400, refused);
  expectError(await post('name=x', 'text/plain'), 415, refused);
}

/** A GraphQL operation through HTTP (its body is `{data, errors}`, loosely typed for assertions). */
export async function gql(
  gw: { url: string; key: string },
  query: string,
  variables: Record<string, unknown> = {},
  options: { key?: string | null } = {},
): Promise<ApiResponse<any>> {
  return api(gw, 'POST', '/graphql', { body: { query, variables }, key: options.key });
}

/** An extra organisation with its own key, created through the service as the admin CLI does. */
export async function createOrganisation(gw: Pick<TestGateway, 'url' | 'gateway'>, name = 'Other org') {
  const created = await gw.gateway.services.organisations.create(name);
  return { url: gw.url, key: created.key, organisationId: created.organisation.id, workspaceId: created.workspace.id };
}

/** Stops the gateway's background work (job monitor, batch runner, usage ledger), for tests that count SQL statements. */
export async function stopBackgroundWork(gw: Pick<TestGateway, 'gateway'>): Promise<void> {
  const { monitor, batchRunner, services } = gw.gateway;
  await Promise.all([monitor.stop(), batchRunner.stop(), services.usage.ledger.stop()]);
}

/**
 * A fake provider and a gateway pointed at it by `env`, started before a file's tests and stopped
 * after them, the gateway's log lines kept in `logs`. Read `fake` and `gw` inside the tests.
 */
export function gatewayOnFake<F extends { close(): Promise<void> }>(start: () => Promise<F>, env: (fake: F) => Record<string, string>) {
  const on = { logs: [] as string[] } as { fake: F; gw: TestGateway; logs: string[] };
  beforeAll(async () => {
    on.fake = await start();
    on.gw = await startTestGateway(env(on.fake), { logs: on.logs });
  });
  afterAll(async () => {
    await on.gw?.stop();
    await on.fake?.close();
  });
  return on;
}
