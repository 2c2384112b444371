/**
 * How real database errors are judged (both databases): a server that is shutting down, refuses new
 * connections, or cancels a statement on its timeout means "unavailable, retry" (503 with Retry-After);
 * a full disk is 507 with its own code; a constraint violation or a bad query is none of these. The
 * errors are raised by the database itself (`RAISE … USING ERRCODE`) and come through the real driver
 * adapter, as they would in production.
 */
import { databaseUnavailable, isDatabaseUnavailable } from '../../src/db/outage';
import { api, useTestGateway } from '../support/gateway';

const gw = useTestGateway();

/** The error the database raises with SQLSTATE `errcode`, as Prisma throws it. */
async function raised(errcode: string): Promise<unknown> {
  const prisma = gw.gateway.services.db.prisma;
  return prisma.$executeRawUnsafe(`DO $$ BEGIN RAISE EXCEPTION 'simulated' USING ERRCODE = '${errcode}'; END $$`).then(
    () => {
      throw new Error('the database raised nothing');
    },
    (err: unknown) => err,
  );
}

describe(`database errors (${process.env.TEST_DATABASE_URL ? 'Postgres' : 'PGlite'})`, () => {
  it.each(['57P01', '57P03', '57014', '08006', '53300'])('SQLSTATE %s is a 503 service_unavailable with Retry-After', async (errcode) => {
    const mapped = databaseUnavailable(await raised(errcode));
    expect(mapped).toMatchObject({
      kind: 'unavailable',
      status: 503,
      type: 'service_unavailable',
      code: 'database_unavailable',
      graphqlCode: 'SERVICE_UNAVAILABLE',
    });
    expect(mapped?.retryAfterSeconds).toBeGreaterThan(0);
  });

  it('a full disk (SQLSTATE 53100) is a 507 with its own code', async () => {
    expect(databaseUnavailable(await raised('53100'))).toMatchObject({ kind: 'unavailable', status: 507, code: 'database_disk_full' });
  });

  it.each(['23505', '22P02', '42P01', 'P0001'])('SQLSTATE %s is not an outage', async (errcode) => {
    expect(isDatabaseUnavailable(await raised(errcode))).toBe(false);
  });

  it('a database that answers is ready, and ordinary errors keep their status', async () => {
    expect((await api(gw, 'GET', '/readyz', { key: null })).status).toBe(200);
    expect((await api(gw, 'GET', '/v1/labels/00000000-0000-4000-8000-000000000000')).status).toBe(404);
  });
});
