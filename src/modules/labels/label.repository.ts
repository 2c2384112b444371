import type { Scope } from '../../auth/scope';
import { likeLiteral } from '../../db/like';
import { inScope } from '../../db/scope';
import type { PrismaClient } from '../../db/database';
import type { Tx } from '../../db/prisma-errors';
import type { Label, Prisma } from '../../generated/prisma/client';

/** Label rows, always within one organisation's workspace. */
export class LabelRepository {
  constructor(private readonly prisma: PrismaClient) {}

  findById(scope: Scope, id: string): Promise<Label | null> {
    return this.prisma.label.findFirst({ where: { ...inScope(scope), id } });
  }

  findManyByIds(scope: Scope, ids: readonly string[]): Promise<Label[]> {
    return this.prisma.label.findMany({ where: { ...inScope(scope), id: { in: [...ids] } } });
  }

  async page(scope: Scope, filter: { search?: string; skip: number; take: number }): Promise<{ total: number; rows: Label[] }> {
    const where: Prisma.LabelWhereInput = {
      ...inScope(scope),
      ...(filter.search ? { name: { contains: likeLiteral(filter.search), mode: 'insensitive' } } : {}),
    };
    const [total, rows] = await Promise.all([
      this.prisma.label.count({ where }),
      this.prisma.label.findMany({ where, orderBy: [{ createdAt: 'asc' }, { name: 'asc' }], skip: filter.skip, take: filter.take }),
    ]);
    return { total, rows };
  }

  create(
    scope: Scope,
    data: { name: string; description?: string; colorCode?: string; isUniversal?: boolean },
    tx: Tx | PrismaClient = this.prisma,
  ): Promise<Label> {
    return tx.label.create({ data: { ...inScope(scope), ...data } });
  }

  /** Returns false when no label of the scope has that id. */
  async update(scope: Scope, id: string, data: { name?: string; description?: string; colorCode?: string }): Promise<boolean> {
    const { count } = await this.prisma.label.updateMany({ where: { ...inScope(scope), id }, data: { ...data, lastUpdatedAt: new Date() } });
    return count > 0;
  }

  async delete(scope: Scope, id: string): Promise<boolean> {
    const { count } = await this.prisma.label.deleteMany({ where: { ...inScope(scope), id } });
    return count > 0;
  }
}
