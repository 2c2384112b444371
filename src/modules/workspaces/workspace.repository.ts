import type { PrismaClient } from '../../db/database';
import type { Tx } from '../../db/prisma-errors';
import type { Workspace } from '../../generated/prisma/client';
import { isUuid } from '../../validation/parse';

/** Workspace rows, always within one organisation. */
export class WorkspaceRepository {
  constructor(private readonly prisma: PrismaClient) {}

  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.prisma.$transaction(work);
  }

  create(tx: Tx, organisationId: string, data: { name: string; slug: string }): Promise<Workspace> {
    return tx.workspace.create({ data: { organisationId, name: data.name, slug: data.slug } });
  }

  list(organisationId: string): Promise<Workspace[]> {
    return this.prisma.workspace.findMany({ where: { organisationId }, orderBy: [{ createdAt: 'asc' }, { slug: 'asc' }] });
  }

  /** A workspace of the organisation by UUID or slug. */
  findByRef(organisationId: string, ref: string): Promise<Workspace | null> {
    const where = isUuid(ref) ? { organisationId, id: ref } : { organisationId, slug: ref };
    return this.prisma.workspace.findFirst({ where });
  }
}
