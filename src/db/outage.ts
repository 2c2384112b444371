/**
 * Telling a database that is out of reach from a query that failed: Prisma's connection codes, the
 * Postgres driver adapter's connection kinds, node-postgres's own timeouts, socket errors and the
 * SQLSTATEs of a server going away. Every transport maps such an error to one GatewayError (503
 * `service_unavailable` with `Retry-After`), and the job monitor pauses on it instead of failing jobs.
 */
import { z } from 'zod';
import { GatewayError } from '../errors';
import { Prisma } from '../generated/prisma/client';

/** What callers are told to wait before retrying; connections are retried on every request, so recovery is quick. */
export const DATABASE_RETRY_AFTER_SECONDS = 2;

/** Prisma's codes for a server that cannot be reached, timed out, closed the connection, or a pool that gave up waiting. */
const PRISMA_CODES = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024']);
/** The driver adapter's (`@prisma/adapter-pg`) kinds of the same failures. */
const ADAPTER_KINDS = new Set(['DatabaseNotReachable', 'ConnectionClosed', 'SocketTimeout', 'TooManyConnections']);
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
/**
 * node-postgres throws plain Errors for its timeouts (`connectionTimeoutMillis`, `query_timeout`) and
 * for a socket that ended; the message is all they carry.
 */
const DRIVER_MESSAGES =
  /^(Connection terminated|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error|Connection ended)/;
/** SQLSTATE classes 08 (connection exception), 57P01–57P03 (shutdown, cannot connect now), 57014 (statement timeout), 53300 (too many connections). */
const SQLSTATE = /^(08...|57P0[1-3]|57014|53300)$/;
/** SQLSTATE 53100: the server's disk is full. */
const DISK_FULL = '53100';

type Verdict = 'unreachable' | 'disk_full' | null;

/** What the driver adapter puts in a Prisma error's `meta.driverAdapterError` (only the fields read). */
const adapterError = z.object({
  cause: z.object({ kind: z.string().optional(), code: z.string().optional(), originalCode: z.string().optional() }).optional(),
});

/** The fields an error of the driver (or a socket) may carry; read by key, so an Error's own properties count. */
const errorFields = z.object({ code: z.unknown(), message: z.unknown(), cause: z.unknown() }).partial();

function adapterCause(err: InstanceType<typeof Prisma.PrismaClientKnownRequestError>) {
  const parsed = adapterError.safeParse(err.meta?.driverAdapterError);
  return parsed.success ? parsed.data.cause : undefined;
}

function classify(err: unknown, depth = 0): Verdict {
  if (typeof err !== 'object' || err === null || depth > 4) return null;
  if (err instanceof Prisma.PrismaClientKnownRequestError) {
    const cause = adapterCause(err);
    const kind = cause?.kind;
    const state = cause?.originalCode ?? cause?.code;
    if (state === DISK_FULL) return 'disk_full';
    if (PRISMA_CODES.has(err.code) || (kind && ADAPTER_KINDS.has(kind)) || (state && SQLSTATE.test(state))) return 'unreachable';
    return null;
  }
  if (err instanceof Prisma.PrismaClientInitializationError) return 'unreachable';
  const fields = errorFields.safeParse(err);
  if (!fields.success) return null;
  const { code, message, cause } = fields.data;
  if (code === DISK_FULL || (typeof message === 'string' && /No space left on device/i.test(message))) return 'disk_full';
  if (typeof code === 'string' && (SOCKET_CODES.has(code) || SQLSTATE.test(code))) return 'unreachable';
  if (typeof message === 'string' && DRIVER_MESSAGES.test(message)) return 'unreachable';
  return classify(cause, depth + 1);
}

/** The 503 (or, for a full disk, 507) a database failure answers with; null when `err` is something else. */
export function databaseUnavailable(err: unknown): GatewayError | null {
  if (err instanceof GatewayError) return err.kind === 'unavailable' ? err : null;
  const verdict = classify(err);
  if (verdict === null) return null;
  const retryAfterSeconds = DATABASE_RETRY_AFTER_SECONDS;
  if (verdict === 'disk_full') {
    return new GatewayError('unavailable', 'The database is out of disk space; try again later', {
      code: 'database_disk_full',
      status: 507,
      retryAfterSeconds,
      cause: err,
    });
  }
  return new GatewayError('unavailable', 'The database is temporarily unavailable; try again shortly', {
    code: 'database_unavailable',
    retryAfterSeconds,
    cause: err,
  });
}

/** Whether `err` means the database is out of reach (or full): retry later, nothing else is wrong. */
export const isDatabaseUnavailable = (err: unknown): boolean => databaseUnavailable(err) !== null;
