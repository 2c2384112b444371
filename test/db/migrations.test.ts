import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { openDatabase } from '../../src/db/database';
import { migrationsDir, projectRoot } from '../../src/db/migrations';
import { api, startTestGateway } from '../support/gateway';
import { createTestDatabase, type TestDatabase } from '../support/database';

const run = promisify(execFile);

/** The admin CLI as an operator runs it, on the database the environment selects. */
async function adminCli(env: Record<string, string>, ...args: string[]) {
  const { stdout } = await run(process.execPath, ['-r', '@swc-node/register', 'src/admin/cli.ts', ...args], {
    cwd: projectRoot(),
    env: { ...process.env, NODE_OPTIONS: '', ...env },
  });
  const lines = stdout.trim().split('\n');
  return JSON.parse(lines[lines.length - 1]) as { organisation_id: string; workspace_id: string; key: string };
}

const migrationNames = () =>
  fs
    .readdirSync(migrationsDir(), { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();

describe('database start-up and migrations', () => {
  let database: TestDatabase;
  let dataDir: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    database = await createTestDatabase();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-db-'));
    env = database.databaseUrl ? { DATABASE_URL: database.databaseUrl, DATA_DIR: dataDir } : { DATA_DIR: dataDir };
  });
  afterAll(async () => {
    await database.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('creates the schema on first start, keeps data across restarts, and applies nothing the second time', async () => {
    const first = await startTestGateway({ ...env, reuseDatabase: 'yes' });
    const id = (await api(first, 'POST', '/v1/labels', { body: { name: 'survives-restart' } })).body.id;
    expect(id).toBeDefined();
    await first.gateway.stop();

    const db = await openDatabase({ databaseUrl: database.databaseUrl, pgliteDir: path.join(dataDir, 'pglite') });
    try {
      expect(await db.migrate()).toEqual([]);
      const rows = await db.prisma.$queryRawUnsafe<Array<{ migration_name: string; finished_at: Date | null; rolled_back_at: Date | null; applied_steps_count: number }>>(
        'SELECT migration_name, finished_at, rolled_back_at, applied_steps_count FROM _prisma_migrations ORDER BY migration_name',
      );
      expect(rows.map((r) => r.migration_name)).toEqual(migrationNames());
      for (const row of rows) {
        expect(row.finished_at).not.toBeNull();
        expect(row.rolled_back_at).toBeNull();
        expect(Number(row.applied_steps_count)).toBe(1);
      }
    } finally {
      await db.close();
    }

    // Same database, same bootstrap key: the data and the key are still there.
    const second = await startTestGateway({ ...env, reuseDatabase: 'yes', GATEWAY_BOOTSTRAP_API_KEY: first.key });
    try {
      const label = await api(second, 'GET', `/v1/labels/${id}`);
      expect(label.status).toBe(200);
      expect(label.body.name).toBe('survives-restart');
      // Bootstrapping happens once: still one organisation.
      expect(await second.gateway.services.db.prisma.organisation.count()).toBe(1);
    } finally {
      await second.gateway.stop();
    }
  });

  it('lets an operator create organisations and keys from the command line', async () => {
    const org = await adminCli(env, 'create-organisation', 'Acme');
    expect(org).toEqual({ organisation_id: expect.any(String), workspace_id: expect.any(String), key: expect.stringMatching(/^gw_/) });
    const wsKey = await adminCli(env, 'create-key', '--organisation', org.organisation_id, '--workspace', 'default');
    expect(wsKey.workspace_id).toBe(org.workspace_id);

    const gw = await startTestGateway({ ...env, reuseDatabase: 'yes' });
    try {
      const acme = { url: gw.url, key: org.key };
      expect((await api(acme, 'GET', '/v1/labels')).body.total).toBe(3);
      expect((await api({ url: gw.url, key: wsKey.key }, 'GET', '/v1/api-keys')).status).toBe(403);

      if (database.kind === 'postgres') {
        // On Postgres the CLI works while the server runs.
        const live = await adminCli(env, 'create-organisation', 'Live');
        expect((await api({ url: gw.url, key: live.key }, 'GET', '/v1/labels')).status).toBe(200);
      } else {
        // The embedded database admits one process: the CLI says so instead of corrupting it.
        await expect(adminCli(env, 'create-organisation', 'Blocked')).rejects.toMatchObject({
          stderr: expect.stringMatching(/in use by process \d+/),
        });
      }
    } finally {
      await gw.gateway.stop();
    }
  });
});
