import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { openDatabase, type Database } from '../../src/db/database';
import { isEveryMigrationRecorded, migrationChecksum, migrationsDir, projectRoot, readMigrations, type RecordedMigration } from '../../src/db/migrations';
import { nodeArgs } from '../support/compiled';
import { api, startTestGateway } from '../support/gateway';
import { createTestDatabase, type TestDatabase } from '../support/database';

const run = promisify(execFile);

/** The admin CLI as an operator runs it, on the database the environment selects. */
async function adminCli(env: Record<string, string>, ...args: string[]) {
  const { stdout } = await run(process.execPath, nodeArgs('src/admin/cli.ts', ...args), {
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
    // Migrations are what this file tests: it starts from an empty database, not the run's template.
    database = await createTestDatabase({ migrated: false });
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
      // Every migration is recorded unchanged: the schema engine is not even loaded.
      expect(await db.migrate()).toEqual({ applied: [], engineRan: false });
      const rows = await db.prisma.$queryRawUnsafe<
        Array<{ migration_name: string; finished_at: Date | null; rolled_back_at: Date | null; applied_steps_count: number }>
      >('SELECT migration_name, finished_at, rolled_back_at, applied_steps_count FROM _prisma_migrations ORDER BY migration_name');
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

describe('the migrations fast path', () => {
  let database: TestDatabase;
  let db: Database;
  let dir: string;

  /** A copy of prisma/migrations this test may change. */
  const editableMigrations = () => {
    const copy = path.join(dir, `migrations-${Math.random().toString(36).slice(2)}`);
    fs.cpSync(migrationsDir(), copy, { recursive: true });
    return copy;
  };

  beforeAll(async () => {
    database = await createTestDatabase({ migrated: false });
    db = await openDatabase({ databaseUrl: database.databaseUrl, pgliteDir: database.pgliteDir });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-migrations-'));
  });
  afterAll(async () => {
    await db.close();
    await database.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('runs the engine while there is no migrations table, and skips it once every migration is recorded', async () => {
    expect(await db.migrate()).toEqual({ applied: migrationNames(), engineRan: true });
    expect(await db.migrate()).toEqual({ applied: [], engineRan: false });
  });

  it('hands a new migration to the engine, which applies it', async () => {
    const migrations = editableMigrations();
    const name = '29991231000000_fast_path_probe';
    fs.mkdirSync(path.join(migrations, name));
    fs.writeFileSync(path.join(migrations, name, 'migration.sql'), 'CREATE TABLE "fast_path_probe" ("id" INTEGER PRIMARY KEY);\n');

    expect(await db.migrate({ migrationsDir: migrations })).toEqual({ applied: [name], engineRan: true });
    expect(await db.prisma.$queryRawUnsafe('SELECT count(*)::int AS n FROM fast_path_probe')).toEqual([{ n: 0 }]);
    expect(await db.migrate({ migrationsDir: migrations })).toEqual({ applied: [], engineRan: false });
  });

  it('hands an edited migration to the engine', async () => {
    const migrations = editableMigrations();
    const [first] = migrationNames();
    fs.appendFileSync(path.join(migrations, first, 'migration.sql'), '\n-- edited after it was applied\n');

    // Deploying does not re-run an applied migration; what matters is that the engine, not the shortcut, decided.
    expect(await db.migrate({ migrationsDir: migrations })).toEqual({ applied: [], engineRan: true });
  });

  it('records the checksum format it compares: SHA-256 of migration.sql, as 64 hex digits', async () => {
    const rows = await db.prisma.$queryRawUnsafe<Array<{ migration_name: string; checksum: string }>>(
      'SELECT migration_name, checksum FROM _prisma_migrations ORDER BY migration_name',
    );
    for (const name of migrationNames()) {
      const script = fs.readFileSync(path.join(migrationsDir(), name, 'migration.sql'), 'utf8');
      expect(rows.find((row) => row.migration_name === name)?.checksum).toBe(migrationChecksum(script));
    }
    expect(migrationChecksum('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });
});

describe('isEveryMigrationRecorded', () => {
  const migrations = readMigrations();
  const applied = (): RecordedMigration[] =>
    migrations.migrationDirectories.map((dir) => ({
      name: dir.path,
      checksum: dir.migrationFile.content.tag === 'ok' ? migrationChecksum(dir.migrationFile.content.value) : '',
      finished: true,
      rolledBack: false,
    }));

  it('is true only when every migration is recorded, finished and unchanged', () => {
    expect(isEveryMigrationRecorded(migrations, applied())).toBe(true);
  });

  it.each<[string, (rows: RecordedMigration[]) => RecordedMigration[] | null]>([
    ['there is no migrations table', () => null],
    ['a migration is not recorded', (rows) => rows.slice(1)],
    ['the database knows a migration this checkout does not', (rows) => [...rows, { ...rows[0], name: '29991231000000_elsewhere' }]],
    ['a script changed since it was applied', (rows) => [{ ...rows[0], checksum: migrationChecksum('changed') }, ...rows.slice(1)]],
    ['a migration failed (never finished)', (rows) => [{ ...rows[0], finished: false }, ...rows.slice(1)]],
    ['a migration was rolled back', (rows) => [{ ...rows[0], rolledBack: true }, ...rows.slice(1)]],
  ])('is false when %s', (_case, change) => {
    expect(isEveryMigrationRecorded(migrations, change(applied()))).toBe(false);
  });
});
