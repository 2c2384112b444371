import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PrismaPg } from '@prisma/adapter-pg';
import { Client } from 'pg';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { applyMigrations, readMigrations } from '../../src/db/migrations';
import { RUN_DIR_ENV } from './global-setup';

/**
 * One migrated database per test run, copied for each test file: migrating costs seconds (the
 * WebAssembly schema engine, and on PGlite initdb before it), copying a fraction of that.
 *
 * Built lazily, by the first test file that asks, so a run of tests that need no database (fakes,
 * unit tests) pays nothing. Both kinds are named after a hash of prisma/migrations: a template is
 * reused only while the migrations are unchanged.
 */

/** Hash of every migration's name and script: changes whenever a migration is added or edited. */
export function migrationsHash(): string {
  const hash = createHash('sha256');
  for (const dir of readMigrations().migrationDirectories) {
    const content = dir.migrationFile.content;
    hash.update(`${dir.path}\0${content.tag === 'ok' ? content.value : ''}\0`);
  }
  return hash.digest('hex').slice(0, 16);
}

/**
 * A file holding a migrated PGlite data directory, or undefined outside a jest run (no run folder):
 * the database then starts empty and is migrated as in production.
 */
export async function pgliteTemplate(): Promise<string | undefined> {
  const runDir = process.env[RUN_DIR_ENV];
  if (!runDir) return undefined;
  const dump = path.join(runDir, `pglite-${migrationsHash()}.tar`);
  if (!fs.existsSync(dump)) await buildPgliteDump(dump);
  return dump;
}

/**
 * The two jest workers may both find no dump at the start and both build one: cheaper than making
 * one wait idle for the other. Each publishes with link(), which never replaces a file a test may
 * be reading; the loser just drops its copy.
 */
async function buildPgliteDump(dump: string): Promise<void> {
  const pglite = await PGlite.create('memory://');
  const building = `${dump}.${process.pid}.tmp`;
  try {
    await applyMigrations(new PrismaPGlite(pglite));
    // Uncompressed: loading it is faster, and the file lives only as long as the run.
    const tarball = await pglite.dumpDataDir('none');
    fs.writeFileSync(building, new Uint8Array(await tarball.arrayBuffer()));
    fs.linkSync(building, dump);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    fs.rmSync(building, { force: true });
    await pglite.close();
  }
}

/** Any constant: serialises template builds of concurrent runs (other checkouts may share the server). */
const TEMPLATE_LOCK = 7_240_311;

/**
 * The name of a migrated template database on the Postgres server, built on first use. It gets its
 * name only once complete, and admits no connections: `CREATE DATABASE … TEMPLATE` fails while
 * anyone is connected to the template, and concurrent copies are otherwise fine.
 */
export async function postgresTemplate(serverUrl: string): Promise<string> {
  const name = `gw_template_${migrationsHash()}`;
  const admin = new Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    if (await databaseExists(admin, name)) return name;
    await admin.query('SELECT pg_advisory_lock($1)', [TEMPLATE_LOCK]);
    try {
      if (!(await databaseExists(admin, name))) await buildPostgresTemplate(admin, serverUrl, name);
    } finally {
      await admin.query('SELECT pg_advisory_unlock($1)', [TEMPLATE_LOCK]);
    }
    return name;
  } finally {
    await admin.end();
  }
}

async function databaseExists(admin: Client, name: string): Promise<boolean> {
  return (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1;
}

async function buildPostgresTemplate(admin: Client, serverUrl: string, name: string): Promise<void> {
  const building = `${name}_building`;
  // What a build interrupted by a killed run left behind (Postgres drops no template database).
  if (await databaseExists(admin, building)) {
    await admin.query(`ALTER DATABASE ${building} WITH IS_TEMPLATE false`);
    await admin.query(`DROP DATABASE ${building} WITH (FORCE)`);
  }
  await admin.query(`CREATE DATABASE ${building}`);
  await applyMigrations(new PrismaPg({ connectionString: databaseUrl(serverUrl, building), max: 2 }));
  await admin.query(`ALTER DATABASE ${building} WITH IS_TEMPLATE true ALLOW_CONNECTIONS false`);
  await admin.query(`ALTER DATABASE ${building} RENAME TO ${name}`);
}

/** The server's URL with another database name. */
export function databaseUrl(serverUrl: string, name: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}
