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

  /**
   * Revokes an active key of the organisation: `none` when it has no active key with that id,
   * `last_organisation_key` (nothing changed) when it is the organisation's last active organisation key.
   */
  revoke(organisationId: string, id: string): Promise<'revoked' | 'none' | 'last_organisation_key'> {
    return this.prisma.$transaction(async (tx) => {
      // Serialises revocations within the organisation: two at once cannot each leave the other as the last key.
      await tx.$queryRaw`SELECT id FROM organisations WHERE id = ${organisationId}::uuid FOR UPDATE`;
      const key = await tx.apiKey.findFirst({ where: { id, organisationId, revokedAt: null } });
      if (!key) return 'none';
      if (key.workspaceId === null) {
        const others = await tx.apiKey.count({ where: { organisationId, workspaceId: null, revokedAt: null, id: { not: id } } });
        if (others === 0) return 'last_organisation_key';
      }
      await tx.apiKey.update({ where: { id }, data: { revokedAt: new Date() } });
      return 'revoked';
    });
  }

  async exists(organisationId: string, id: string): Promise<boolean> {
    return (await this.prisma.apiKey.count({ where: { id, organisationId } })) > 0;
  }
}
