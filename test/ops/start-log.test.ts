/**
 * What the gateway says when it starts and stops: the address it really binds (HOST), where the
 * console is, the first-start key pointing at it, a line once it has stopped, and a DATABASE_URL that
 * names a database the server does not have explained in one line with the command that creates it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config';
import { createLogger } from '../../src/logger';
import { startGateway } from '../../src/main';
import { createTestDatabase } from '../support/database';
import { databaseUrl } from '../support/template';

/** Starts a gateway on a fresh database with `env`, stops it, and returns its log lines (pino JSON). */
async function startAndStop(env: Record<string, string>, whileRunning: (url: string) => Promise<void> = async () => {}): Promise<Array<Record<string, any>>> {
  const database = await createTestDatabase({ migrated: true });
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-start-log-'));
  const lines: string[] = [];
  try {
    const config = loadConfig({
      PORT: '0',
      LOG_LEVEL: 'info',
      DATA_DIR: dataDir,
      ...(database.databaseUrl ? { DATABASE_URL: database.databaseUrl } : {}),
      ...env,
    });
    config.pgliteDir = database.pgliteDir;
    const gateway = await startGateway(config, createLogger(config.logLevel, { write: (line: string) => void lines.push(line) }), {
      pgliteLoadDataDir: database.pgliteLoadDataDir,
    });
    await whileRunning(gateway.url);
    await gateway.stop();
  } finally {
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  return lines.map((line) => JSON.parse(line));
}

afterEach(() => jest.restoreAllMocks());

describe('start and stop log', () => {
  it.each([
    ['0.0.0.0', /^gateway listening on http:\/\/0\.0\.0\.0:(\d+); console at http:\/\/127\.0\.0\.1:\1\/console$/],
    ['127.0.0.1', /^gateway listening on http:\/\/127\.0\.0\.1:(\d+); console at http:\/\/127\.0\.0\.1:\1\/console$/],
  ])('with HOST=%s names the address it binds and where the console is, and says when it has stopped', async (host, listening) => {
    const logs = await startAndStop({ HOST: host, GATEWAY_BOOTSTRAP_API_KEY: `gw_test_${'s'.repeat(32)}` });
    const messages = logs.map((l) => l.msg as string);
    expect(messages.filter((m) => m.startsWith('gateway listening'))).toEqual([expect.stringMatching(listening)]);
    expect(messages.at(-1)).toBe('gateway stopped');
  });

  it('points the first-start key at the console', async () => {
    const printed: string[] = [];
    jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      printed.push(String(chunk));
      return true;
    });
    let url = '';
    await startAndStop({ HOST: '127.0.0.1' }, async (u) => {
      url = u;
    });
    const banner = printed.join('');
    expect(banner).toMatch(/Your organisation API key \(shown once, store it now\):\n\n {2}gw_\S+\n\nSign in with it at (http:\S+)\n/);
    expect(/Sign in with it at (\S+)/.exec(banner)![1]).toBe(`${url}/console`);
  });
});

const POSTGRES = process.env.TEST_DATABASE_URL;
const describePostgres = POSTGRES ? describe : describe.skip;

describePostgres(POSTGRES ? 'a DATABASE_URL naming a missing database' : 'a missing database — skipped: needs Postgres (set TEST_DATABASE_URL)', () => {
  it('is one log line naming the database and the createdb command, and the start fails', async () => {
    const lines: string[] = [];
    const dataDir = mkdtempSync(join(tmpdir(), 'gw-missing-db-'));
    const url = databaseUrl(POSTGRES!, 'gw_does_not_exist');
    try {
      const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', DATA_DIR: dataDir, DATABASE_URL: url });
      const start = startGateway(config, createLogger(config.logLevel, { write: (line: string) => void lines.push(line) }));
      await expect(start).rejects.toThrow(/^The database "gw_does_not_exist" named in DATABASE_URL does not exist: create it with `createdb /);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
    const errors = lines.map((l) => JSON.parse(l)).filter((l) => l.level >= 50);
    const { hostname, port, username } = new URL(url);
    expect(errors).toEqual([
      expect.objectContaining({
        database: 'gw_does_not_exist',
        msg: `The database "gw_does_not_exist" named in DATABASE_URL does not exist: create it with \`createdb -h ${hostname}${port ? ` -p ${port}` : ''}${username ? ` -U ${username}` : ''} gw_does_not_exist\`, or point DATABASE_URL at an existing one`,
      }),
    ]);
    expect(errors[0].msg).not.toContain('\n');
  });
});
