import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type * as PGliteDriver from '@electric-sql/pglite';
import type * as PgAdapter from '@prisma/adapter-pg';
import type * as Pg from 'pg';
import type * as PgCopyStreams from 'pg-copy-streams';
import type { SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import type * as PGliteAdapter from 'pglite-prisma-adapter';
import { PrismaClient } from '../generated/prisma/client';
import { errnoCode } from '../errors';
import { ensurePrivateDir } from '../storage/private-dir';
import { migrate, type MigrateOptions, type MigrationOutcome, type RawQuery } from './migrations';
import type * as Notifications from './notifications';
import type { NotificationHandlers, NotificationListener } from './notifications';
import { lazyRequire } from '../lazy';

export type { PrismaClient };

export interface DatabaseOptions {
  /** Postgres connection string; without it the embedded PGlite database is used. */
  databaseUrl?: string;
  /** PGlite's directory, or `memory://` for a throw-away database. */
  pgliteDir: string;
  /** Called with each SQL statement Prisma sends (statement counting in tests, debug logs). */
  onQuery?: (sql: string) => void;
  /**
   * A file holding a PGlite data directory (`PGlite.dumpDataDir()`) that an in-memory database starts
   * from instead of an empty one: no initdb, and no migrations when the dump was migrated. Tests
   * copy one pre-migrated database this way.
   */
  pgliteLoadDataDir?: string;
  /**
   * Postgres only: how long to wait for a connection (from the pool or a new one) and for a query's
   * answer. They bound every request while the server is unreachable or hangs, so it answers 503 in
   * time and no pool slot stays stuck.
   */
  timeouts?: { connectMs: number; queryMs: number };
}

export interface Database {
  kind: 'postgres' | 'pglite';
  prisma: PrismaClient;
  /** Applies pending migrations (the schema engine runs only when some may be pending). */
  migrate(options?: MigrateOptions): Promise<MigrationOutcome>;
  /** The channel's notifications: through a dedicated connection on Postgres, the embedded database's own on PGlite. */
  listen(channel: string, handlers: NotificationHandlers): Promise<NotificationListener>;
  /**
   * Appends rows to a table by COPY: `text` holds a line per row, its values in `columns`' order,
   * tab-separated, in COPY's text format (see `copyText`). Many rows cost a fraction of an INSERT's
   * work on both sides (the usage ledger's writes, issue 26). Outside any transaction; the table's
   * insert triggers run as for an INSERT. On Postgres through a connection of its own (Prisma's
   * driver adapter has no COPY), opened on first use.
   */
  copyRows: (table: string, columns: readonly string[], text: string) => Promise<void>;
  close(): Promise<void>;
}

/**
 * A value as COPY's text format spells it: null is `\N`; backslash, tab, newline and carriage return
 * are escaped (any other character is itself, delimiters included only as escapes).
 */
export function copyText(value: string | number | boolean | null): string {
  if (value === null) return '\\N';
  if (typeof value !== 'string') return String(value);
  // Most values have nothing to escape: a test is cheaper than a replace that finds nothing.
  return HAS_COPY_ESCAPE.test(value) ? value.replace(COPY_ESCAPES, (c) => COPY_ESCAPED[c]) : value;
}

const HAS_COPY_ESCAPE = /[\\\t\n\r]/;
const COPY_ESCAPES = /[\\\t\n\r]/g;
const COPY_ESCAPED: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** The COPY statement of `copyRows` from `source` (PGlite reads the rows from a blob); the names are the caller's constants, quoted. */
const copyStatement = (table: string, columns: readonly string[], source: 'STDIN' | `'/dev/blob'`) =>
  `COPY "${table}" (${columns.map((column) => `"${column}"`).join(', ')}) FROM ${source}`;

// Each kind of database requires its own driver when opened: the other one's would only slow the start.
const postgresAdapter = lazyRequire<typeof PgAdapter>(require, '@prisma/adapter-pg');
const postgresNotifications = lazyRequire<typeof Notifications>(require, './notifications');
const pgDriver = lazyRequire<typeof Pg>(require, 'pg');
const pgCopyStreams = lazyRequire<typeof PgCopyStreams>(require, 'pg-copy-streams');
const pgliteDriver = lazyRequire<typeof PGliteDriver>(require, '@electric-sql/pglite');
const pgliteAdapter = lazyRequire<typeof PGliteAdapter>(require, 'pglite-prisma-adapter');

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  return options.databaseUrl ? openPostgres(options.databaseUrl, options) : openPglite(options);
}

function newClient(adapter: SqlMigrationAwareDriverAdapterFactory, onQuery?: (sql: string) => void): PrismaClient {
  // `minimal` (Prisma's default under NODE_ENV=production only): no stack trace captured on every query
  // to point error messages at the caller's line, a measurable part of each request. Errors are mapped
  // by their code (src/db/prisma-errors.ts), never by their message.
  const errorFormat = 'minimal';
  if (!onQuery) return new PrismaClient({ adapter, errorFormat });
  const client = new PrismaClient({ adapter, errorFormat, log: [{ emit: 'event', level: 'query' }] });
  client.$on('query', (event) => onQuery(event.query));
  return client;
}

/** Raw SQL through the client, for the migrations check that runs before the engine would. */
function rawQuery(prisma: PrismaClient): RawQuery {
  return <Row>(sql: string) => prisma.$queryRawUnsafe<Row[]>(sql);
}

function openPostgres(url: string, options: DatabaseOptions): Database {
  const { PrismaPg } = postgresAdapter();
  const { listenPostgres } = postgresNotifications();
  const timeouts = options.timeouts;
  const pool = timeouts
    ? {
        connectionTimeoutMillis: timeouts.connectMs,
        // Client side (a hanging link), then server side (the server stops work nobody waits for).
        query_timeout: timeouts.queryMs,
        statement_timeout: timeouts.queryMs,
        keepAlive: true,
      }
    : {};
  const prisma = newClient(new PrismaPg({ connectionString: url, ...pool }), options.onQuery);
  // One connection for COPY, opened on first use (a gateway with the usage ledger off never opens it).
  let copyPool: Pg.Pool | undefined;
  const openCopyPool = () => {
    const made = new (pgDriver().Pool)({ connectionString: url, ...pool, max: 1 });
    // An idle connection that breaks is dropped by the pool and the next COPY opens another, whose own
    // failure (the database still away) reaches the caller: nothing to report here.
    made.on('error', () => {});
    return made;
  };
  return {
    kind: 'postgres',
    prisma,
    // The engine gets its own small pool (it connects only if the engine runs), closed with the engine's work.
    migrate: (migrateOptions) => migrate(new PrismaPg({ connectionString: url, max: 2 }), rawQuery(prisma), migrateOptions),
    listen: (channel, handlers) => listenPostgres(url, channel, handlers),
    copyRows: async (table, columns, text) => {
      copyPool ??= openCopyPool();
      const client = await copyPool.connect();
      let failure: Error | undefined;
      // A broken link is also told to the connection's listeners, besides the COPY it fails.
      const broken = (err: Error) => (failure ??= err);
      client.on('error', broken);
      try {
        await pipeline(Readable.from([text]), client.query(pgCopyStreams().from(copyStatement(table, columns, 'STDIN'))));
      } catch (err) {
        failure ??= err as Error;
        throw err;
      } finally {
        // A connection a COPY failed on is closed (its listener stays for what else it may tell), not given back for the next one.
        if (!failure) client.off('error', broken);
        client.release(failure);
      }
    },
    close: async () => {
      await prisma.$disconnect();
      await copyPool?.end();
    },
  };
}

async function openPglite(options: DatabaseOptions): Promise<Database> {
  const inMemory = options.pgliteDir.startsWith('memory://');
  // PGlite refuses to load a dump over an existing database; a persistent directory may hold one.
  if (options.pgliteLoadDataDir && !inMemory) throw new Error('pgliteLoadDataDir applies to in-memory databases (memory://) only');
  const releaseLock = inMemory ? () => {} : lockDataDir(options.pgliteDir);
  try {
    const { PGlite } = pgliteDriver();
    const { PrismaPGlite } = pgliteAdapter();
    const loadDataDir = options.pgliteLoadDataDir ? new Blob([new Uint8Array(await fs.promises.readFile(options.pgliteLoadDataDir))]) : undefined;
    const pglite = await PGlite.create(options.pgliteDir, { loadDataDir });
    const adapter = new PrismaPGlite(pglite);
    const prisma = newClient(adapter, options.onQuery);
    return {
      kind: 'pglite',
      prisma,
      migrate: (migrateOptions) => migrate(adapter, rawQuery(prisma), migrateOptions),
      listen: async (channel, handlers) => {
        // One process, one connection: notifications cannot be missed, so the listener never goes down,
        // and a payload this process has handled has been handled by every listener.
        const unlisten = await pglite.listen(channel, (payload) => {
          handlers.onNotification(payload);
          if (handlers.isAwaited(payload)) handlers.onDelivered(payload);
        });
        handlers.onListening(true);
        return { close: () => unlisten() };
      },
      copyRows: async (table, columns, text) => {
        await pglite.query(copyStatement(table, columns, `'/dev/blob'`), [], { blob: new Blob([text]) });
      },
      close: async () => {
        await prisma.$disconnect();
        await pglite.close();
        releaseLock();
      },
    };
  } catch (err) {
    releaseLock();
    throw err;
  }
}

export class DatabaseInUseError extends Error {}

/**
 * PGlite is a single-process database: a second process opening the same directory corrupts it.
 * A lock file holding the owner's pid turns that into a clear refusal; a stale lock (its process
 * gone) is taken over.
 */
function lockDataDir(dir: string): () => void {
  ensurePrivateDir(dir);
  const lockPath = path.join(path.dirname(dir), `${path.basename(dir)}.lock`);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.writeFileSync(lockPath, String(process.pid), { flag: 'wx' });
      return () => fs.rmSync(lockPath, { force: true });
    } catch (err) {
      if (errnoCode(err) !== 'EEXIST') throw err;
      const owner = Number(fs.readFileSync(lockPath, 'utf8'));
      if (owner && owner !== process.pid && isAlive(owner)) {
        throw new DatabaseInUseError(
          `The embedded database in ${dir} is in use by process ${owner}. It admits one process at a time: ` +
            'stop that process first, or use a Postgres server through DATABASE_URL.',
        );
      }
      fs.rmSync(lockPath, { force: true });
    }
  }
  throw new DatabaseInUseError(`Could not lock the embedded database in ${dir}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return errnoCode(err) === 'EPERM';
  }
}
