import { generateApiKey, hashApiKey, keyPrefix } from '../../auth/api-key-secret';
import type { Caller } from '../../auth/scope';
import type { PrismaClient } from '../../db/database';
import type { Tx } from '../../db/prisma-errors';
import { notFound, unauthenticated } from '../../errors';
import type { ApiKey } from '../../generated/prisma/client';
import { isUuid, parseInput, type Unvalidated } from '../../validation/parse';
import type { WorkspaceService } from '../workspaces/workspace.service';
import { createApiKeySchema, type CreateApiKeyInput } from './api-key.schemas';



export interface IssuedKey {
  record: ApiKey;
  /** The secret, returned this once and never stored. */
  key: string;
}

export class ApiKeyService {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly workspaces: WorkspaceService,
  ) {}

  /** The caller behind a key; 401 for a missing, unknown or revoked key. */
  async authenticate(key: string | undefined): Promise<Caller> {
    if (!key) throw unauthenticated('Missing API key: send it in the x-gateway-api-key header');
    const record = await this.prisma.apiKey.findUnique({ where: { hash: hashApiKey(key) } });
    if (!record || record.revokedAt) throw unauthenticated('Invalid or revoked API key');
    return { keyId: record.id, organisationId: record.organisationId, workspaceId: record.workspaceId };
  }

  async create(organisationId: string, input: Unvalidated<CreateApiKeyInput>): Promise<IssuedKey> {
    const data = parseInput(createApiKeySchema, input);
    let workspaceId: string | null = null;
    if (data.workspaceId) {
      const workspace = await this.workspaces.find(organisationId, data.workspaceId);
      if (!workspace) throw notFound('Workspace', data.workspaceId);
      workspaceId = workspace.id;
    }
    return this.issue(this.prisma, { organisationId, workspaceId, name: data.name });
  }

  /** Stores a key (given, e.g. the bootstrap key, or generated) by its hash. */
  async issue(tx: Tx | PrismaClient, data: { organisationId: string; workspaceId: string | null; name: string; key?: string }): Promise<IssuedKey> {
    const key = data.key ?? generateApiKey();
    const record = await tx.apiKey.create({
      data: { organisationId: data.organisationId, workspaceId: data.workspaceId, name: data.name, prefix: keyPrefix(key), hash: hashApiKey(key) },
    });
    return { record, key };
  }

  list(organisationId: string): Promise<ApiKey[]> {
    return this.prisma.apiKey.findMany({ where: { organisationId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
  }

  /** Revokes a key of the organisation; revoked keys answer 401 from the next request on. */
  async revoke(organisationId: string, id: string): Promise<void> {
    if (!isUuid(id)) throw notFound('API key', id);
    const { count } = await this.prisma.apiKey.updateMany({
      where: { id, organisationId, revokedAt: null },
      data: { revokedAt: new Date() },
    });
    if (count === 0) {
      const exists = await this.prisma.apiKey.count({ where: { id, organisationId } });
      if (!exists) throw notFound('API key', id);
    }
  }
}
