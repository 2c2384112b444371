import { Prisma } from '../generated/prisma/client';

/** SQLSTATE 3D000 (invalid_catalog_name): the database DATABASE_URL names does not exist on the server. */
const DATABASE_DOES_NOT_EXIST = '3D000';

/**
 * The start-up failure of a DATABASE_URL naming a database the server does not have: what is missing
 * and the command that creates it, in one line (Prisma's own text is a multi-line raw-query dump).
 */
export class MissingDatabaseError extends Error {
  constructor(
    readonly database: string,
    readonly createCommand: string,
  ) {
    super(`The database "${database}" named in DATABASE_URL does not exist: create it with \`${createCommand}\`, or point DATABASE_URL at an existing one`);
    this.name = 'MissingDatabaseError';
  }
}

/** `err` as a {@link MissingDatabaseError} when it is the server saying the database does not exist; else null. */
export function missingDatabase(err: unknown, databaseUrl: string): MissingDatabaseError | null {
  if (!(err instanceof Prisma.PrismaClientKnownRequestError)) return null;
  const meta: { driverAdapterError?: { cause?: { originalCode?: unknown } } } | undefined = err.meta;
  if (meta?.driverAdapterError?.cause?.originalCode !== DATABASE_DOES_NOT_EXIST) return null;
  const url = new URL(databaseUrl);
  const database = decodeURIComponent(url.pathname.slice(1));
  const options = [url.hostname && `-h ${url.hostname}`, url.port && `-p ${url.port}`, url.username && `-U ${decodeURIComponent(url.username)}`].filter(
    Boolean,
  );
  return new MissingDatabaseError(database, ['createdb', ...options, shellWord(database)].join(' '));
}

/** A database name as one shell word (names are usually plain; quoted when not). */
const shellWord = (word: string) => (/^[\w.-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`);
