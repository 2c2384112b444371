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

/** Applies pending migrations; returns the names applied now (empty when the database is current). */
export async function applyMigrations(
  adapterFactory: SqlMigrationAwareDriverAdapterFactory,
  log: (message: string) => void = () => {},
): Promise<string[]> {
  const { engine, explain } = await openSchemaEngine(schemaPath(), adapterFactory, log);
  try {
    const result = await engine.applyMigrations({ migrationsList: readMigrations(), filters: NO_FILTERS });
    return result.appliedMigrationNames;
  } catch (err) {
    throw explain(err);
  } finally {
    engine.free();
  }
}
