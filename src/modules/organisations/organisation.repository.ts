import type { PrismaClient } from '../../db/database';
import type { Tx } from '../../db/prisma-errors';
import type { Organisation } from '../../generated/prisma/client';

/** Arbitrary constant: serialises first-start bootstrapping between processes sharing one database. */
const BOOTSTRAP_LOCK = 727_001;

export class OrganisationRepository {
  constructor(private readonly prisma: PrismaClient) {}

  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.prisma.$transaction(work);
  }

  /**
   * Runs `work` in a transaction holding the bootstrap lock, with whether any organisation exists:
   * of several processes starting on an empty database, exactly one sees none.
   */
  withBootstrapLock<T>(work: (tx: Tx, empty: boolean) => Promise<T>): Promise<T> {
    return this.prisma.$transaction(async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(${BOOTSTRAP_LOCK})`;
      return work(tx, (await tx.organisation.count()) === 0);
    });
  }

  create(tx: Tx, name: string): Promise<Organisation> {
    return tx.organisation.create({ data: { name } });
  }

  list(): Promise<Organisation[]> {
    return this.prisma.organisation.findMany({ orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
  }

  async exists(id: string): Promise<boolean> {
    return (await this.prisma.organisation.count({ where: { id } })) > 0;
  }
}
