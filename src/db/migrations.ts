import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import { NO_FILTERS, openSchemaEngine, type MigrationList } from './schema-engine';

const LOCKFILE = 'migration_lock.toml';

/** The project root, found from wherever this file runs (src/ under jest, dist/src/ when built). */
export function projectRoot(): string {
  let dir = __dirname;
  while (!fs.existsSync(path.join(dir, 'prisma', 'schema.prisma'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('prisma/schema.prisma not found above ' + __dirname);
    dir = parent;
  }
  return dir;
}

export const schemaPath = () => path.join(projectRoot(), 'prisma', 'schema.prisma');
export const migrationsDir = () => path.join(projectRoot(), 'prisma', 'migrations');

/** Reads prisma/migrations in the shape the engine expects (Prisma Migrate's directory format). */
export function readMigrations(baseDir = migrationsDir()): MigrationList {
  const lockPath = path.join(baseDir, LOCKFILE);
  const dirs = fs.existsSync(baseDir)
    ? fs
        .readdirSync(baseDir, { withFileTypes: true })
        .filter((d) => d.isDirectory() && fs.existsSync(path.join(baseDir, d.name, 'migration.sql')))
        .map((d) => d.name)
        .sort()
    : [];
  return {
    baseDir,
    lockfile: { path: LOCKFILE, content: fs.existsSync(lockPath) ? fs.readFileSync(lockPath, 'utf8') : null },
    shadowDbInitScript: '',
    migrationDirectories: dirs.map((name) => ({
      path: name,
      migrationFile: {
        path: 'migration.sql',
        content: { tag: 'ok' as const, value: fs.readFileSync(path.join(baseDir, name, 'migration.sql'), 'utf8') },
      },
    })),
  };
}

/** What a migration run did. */
export interface MigrationOutcome {
  /** The names of the migrations applied now (empty when the database was current). */
  applied: string[];
  /** Whether Prisma's schema engine ran; false when `_prisma_migrations` already recorded every migration. */
  engineRan: boolean;
}

export interface MigrateOptions {
  /** Receives the engine's log lines. */
  log?: (message: string) => void;
  /** Where the migrations are; prisma/migrations by default. */
  migrationsDir?: string;
}

/** Runs one SQL statement and returns its rows. */
export type RawQuery = <Row>(sql: string) => Promise<Row[]>;

/**
 * Brings the database up to date. Loading the WebAssembly engine costs seconds, so when the
 * migrations table already records every migration as applied unchanged (the usual restart), the
 * engine is not loaded at all; any doubt (a new, edited, failed or rolled-back migration, no table
 * yet) leaves the decision to the engine, exactly as before.
 */
export async function migrate(adapterFactory: SqlMigrationAwareDriverAdapterFactory, query: RawQuery, options: MigrateOptions = {}): Promise<MigrationOutcome> {
  const migrations = readMigrations(options.migrationsDir);
  if (isEveryMigrationRecorded(migrations, await recordedMigrations(query))) return { applied: [], engineRan: false };
  return { applied: await applyMigrations(adapterFactory, migrations, options.log), engineRan: true };
}

/** One row of `_prisma_migrations`, as far as deciding whether the engine has work to do needs it. */
export interface RecordedMigration {
  name: string;
  checksum: string;
  finished: boolean;
  rolledBack: boolean;
}

/**
 * The rows of the engine's bookkeeping table, or null when there is none yet. The engine creates it
 * in the connection's schema, `public` for the gateway (the generated client queries `public` too).
 */
export async function recordedMigrations(query: RawQuery): Promise<RecordedMigration[] | null> {
  const [{ present }] = await query<{ present: boolean }>(`SELECT to_regclass('public._prisma_migrations') IS NOT NULL AS present`);
  if (!present) return null;
  return query<RecordedMigration>(
    'SELECT migration_name AS "name", checksum, finished_at IS NOT NULL AS "finished", rolled_back_at IS NOT NULL AS "rolledBack" ' +
      'FROM public._prisma_migrations',
  );
}

/**
 * The checksum the engine records for a migration: the SHA-256 of the script's UTF-8 bytes, as
 * 64 lowercase hex digits. (The engine also accepts a script whose line endings changed since; such
 * a script fails the strict comparison here and simply goes through the engine.)
 */
export function migrationChecksum(script: string): string {
  return createHash('sha256').update(script, 'utf8').digest('hex');
}

/**
 * True when every local migration is recorded as finished with its current checksum, the table
 * names no other migration, and no row is failed (unfinished) or rolled back.
 */
export function isEveryMigrationRecorded(migrations: MigrationList, recorded: RecordedMigration[] | null): boolean {
  if (recorded === null) return false;
  if (recorded.some((row) => !row.finished || row.rolledBack)) return false;
  const local = new Map(migrations.migrationDirectories.map((dir) => [dir.path, dir.migrationFile.content]));
  if (recorded.length !== local.size) return false;
  return recorded.every((row) => {
    const content = local.get(row.name);
    return content?.tag === 'ok' && migrationChecksum(content.value) === row.checksum;
  });
}

/** Applies pending migrations through the schema engine; returns the names applied now. */
export async function applyMigrations(
  adapterFactory: SqlMigrationAwareDriverAdapterFactory,
  migrations: MigrationList = readMigrations(),
  log: (message: string) => void = () => {},
): Promise<string[]> {
  const { engine, explain, close } = await openSchemaEngine(schemaPath(), adapterFactory, log);
  try {
    const result = await engine.applyMigrations({ migrationsList: migrations, filters: NO_FILTERS });
    return result.appliedMigrationNames;
  } catch (err) {
    throw explain(err);
  } finally {
    await close();
  }
}
