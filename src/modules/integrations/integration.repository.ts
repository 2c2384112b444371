import type { Scope } from '../../auth/scope';
import { inScope } from '../../db/scope';
import type { PrismaClient } from '../../db/database';
import type { Integration } from '../../generated/prisma/client';

export interface NewIntegrationRow {
  id: string;
  slug: string;
  provider: string;
  name: string;
  encryptedCredentials: string;
  options: Record<string, string>;
}

/** Options as stored: a flat object of strings (the column is JSON). */
export function optionsOf(row: Integration): Record<string, string> {
  const value = row.options;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return {};
  const out: Record<string, string> = {};
  for (const [key, v] of Object.entries(value)) if (typeof v === 'string') out[key] = v;
  return out;
}

/** Integration rows, always within one organisation's workspace. */
export class IntegrationRepository {
  constructor(private readonly prisma: PrismaClient) {}

  findBySlug(scope: Scope, slug: string): Promise<Integration | null> {
    return this.prisma.integration.findFirst({ where: { ...inScope(scope), slug } });
  }

  findById(scope: Scope, id: string): Promise<Integration | null> {
    return this.prisma.integration.findFirst({ where: { ...inScope(scope), id } });
  }

  /** The updated row, or null when the scope has no integration with that id. */
  async update(scope: Scope, id: string, data: Pick<NewIntegrationRow, 'name' | 'encryptedCredentials' | 'options'>): Promise<Integration | null> {
    const { count } = await this.prisma.integration.updateMany({ where: { ...inScope(scope), id }, data });
    return count > 0 ? this.findById(scope, id) : null;
  }

  findManyByIds(scope: Scope, ids: readonly string[]): Promise<Integration[]> {
    return this.prisma.integration.findMany({ where: { ...inScope(scope), id: { in: [...ids] } } });
  }

  list(scope: Scope): Promise<Integration[]> {
    return this.prisma.integration.findMany({ where: inScope(scope), orderBy: [{ createdAt: 'asc' }, { slug: 'asc' }] });
  }

  create(scope: Scope, data: NewIntegrationRow): Promise<Integration> {
    return this.prisma.integration.create({ data: { ...inScope(scope), ...data } });
  }

  /** The deleted row, or null when the scope has no such integration. */
  async delete(scope: Scope, row: Integration): Promise<Integration | null> {
    const { count } = await this.prisma.integration.deleteMany({ where: { ...inScope(scope), id: row.id } });
    return count > 0 ? row : null;
  }
}
