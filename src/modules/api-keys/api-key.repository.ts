import type { PrismaClient } from '../../db/database';
import type { Tx } from '../../db/prisma-errors';
import type { ApiKey } from '../../generated/prisma/client';
import { DEFAULT_WORKSPACE_SLUG } from '../workspaces/workspace.service';

export interface KeyScopeRow {
  id: string;
  organisationId: string;
  workspaceId: string | null;
  defaultWorkspaceId: string | null;
}

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

  /**
   * An active key's scope, and for an organisation key its `default` workspace, in one statement
   * (this runs whenever a key is not cached). Null for an unknown or revoked key.
   */
  async findActiveScope(hash: string): Promise<KeyScopeRow | null> {
    const rows = await this.prisma.$queryRaw<KeyScopeRow[]>`
      SELECT k.id, k.organisation_id AS "organisationId", k.workspace_id AS "workspaceId", w.id AS "defaultWorkspaceId"
      FROM "api_keys" k
      LEFT JOIN "workspaces" w ON k.workspace_id IS NULL AND w.organisation_id = k.organisation_id AND w.slug = ${DEFAULT_WORKSPACE_SLUG}
      WHERE k.hash = ${hash} AND k.revoked_at IS NULL`;
    return rows[0] ?? null;
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
