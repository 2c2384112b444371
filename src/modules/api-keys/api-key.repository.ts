import type { PrismaClient } from '../../db/database';
import type { Tx } from '../../db/prisma-errors';
import type { ApiKey } from '../../generated/prisma/client';

export interface NewApiKeyRow {
  organisationId: string;
  workspaceId: string | null;
  name: string;
  prefix: string;
  hash: string;
}

/** API key rows: looked up by hash, otherwise always within one organisation. */
export class ApiKeyRepository {
  constructor(private readonly prisma: PrismaClient) {}

  findByHash(hash: string): Promise<ApiKey | null> {
    return this.prisma.apiKey.findUnique({ where: { hash } });
  }

  create(data: NewApiKeyRow, tx: Tx | PrismaClient = this.prisma): Promise<ApiKey> {
    return tx.apiKey.create({ data });
  }

  list(organisationId: string): Promise<ApiKey[]> {
    return this.prisma.apiKey.findMany({ where: { organisationId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
  }

  /** Revokes the key unless it already is; false when the organisation has no active key with that id. */
  async revoke(organisationId: string, id: string): Promise<boolean> {
    const { count } = await this.prisma.apiKey.updateMany({ where: { id, organisationId, revokedAt: null }, data: { revokedAt: new Date() } });
    return count > 0;
  }

  async exists(organisationId: string, id: string): Promise<boolean> {
    return (await this.prisma.apiKey.count({ where: { id, organisationId } })) > 0;
  }
}
