import { generateApiKey, hashApiKey, keyPrefix } from '../../auth/api-key-secret';
import type { Caller } from '../../auth/scope';
import type { Tx } from '../../db/prisma-errors';
import { conflict, notFound, unauthenticated } from '../../errors';
import type { ApiKey } from '../../generated/prisma/client';
import { isUuid, parseInput, type Input } from '../../validation/parse';
import type { WorkspaceService } from '../workspaces/workspace.service';
import { keyChange, type ApiKeyCache } from './api-key.cache';
import type { ApiKeyRepository } from './api-key.repository';
import { createApiKeySchema, type CreateApiKeyInput } from './api-key.schemas';

/** How long a revocation waits to be announced before answering anyway (a stalled listener must not block it). */
const REVOCATION_WAIT_MS = 2000;

export interface IssuedKey {
  record: ApiKey;
  /** The secret, returned this once and never stored. */
  key: string;
}

export class ApiKeyService {
  constructor(
    private readonly keys: ApiKeyRepository,
    private readonly workspaces: WorkspaceService,
    readonly cache: ApiKeyCache,
  ) {}

  /** The caller behind a key that is cached, at once (most requests); undefined when `authenticate` must look it up or refuse it. */
  cachedCaller(key: string | undefined): Caller | undefined {
    return key ? this.cache.get(hashApiKey(key)) : undefined;
  }

  /**
   * The caller behind a key; 401 for a missing, unknown or revoked key. Active keys are cached (see
   * ApiKeyCache); `beforeLookup` runs when the database must be asked (it may refuse: failed-auth limiter).
   */
  async authenticate(key: string | undefined, beforeLookup?: () => void): Promise<Caller> {
    if (!key) throw unauthenticated('Missing API key: send it in the x-gateway-api-key header');
    const hash = hashApiKey(key);
    const cached = this.cache.get(hash);
    if (cached) return cached;
    beforeLookup?.();
    const token = this.cache.token();
    const row = await this.keys.findActiveScope(hash);
    if (!row) throw unauthenticated('Invalid or revoked API key');
    const caller: Caller = { keyId: row.id, organisationId: row.organisationId, workspaceId: row.workspaceId };
    if (row.workspaceId === null) caller.defaultWorkspaceId = row.defaultWorkspaceId;
    this.cache.store(hash, caller, token);
    return caller;
  }

  /** A new key of the organisation, for one of its workspaces (`workspaceId`: UUID or slug) or for the whole organisation. */
  async create(organisationId: string, input: Input<CreateApiKeyInput>): Promise<IssuedKey> {
    const data = parseInput(createApiKeySchema, input);
    let workspaceId: string | null = null;
    if (data.workspaceId) {
      const workspace = await this.workspaces.find(organisationId, data.workspaceId);
      if (!workspace) throw notFound('Workspace', data.workspaceId);
      workspaceId = workspace.id;
    }
    return this.issue({ organisationId, workspaceId, name: data.name });
  }

  /** Stores a key (given, e.g. the bootstrap key, or generated) by its hash. */
  async issue(data: { organisationId: string; workspaceId: string | null; name: string; key?: string }, tx?: Tx): Promise<IssuedKey> {
    const key = data.key ?? generateApiKey();
    const row = { organisationId: data.organisationId, workspaceId: data.workspaceId, name: data.name, prefix: keyPrefix(key), hash: hashApiKey(key) };
    return { record: await this.keys.create(row, tx), key };
  }

  list(organisationId: string): Promise<ApiKey[]> {
    return this.keys.list(organisationId);
  }

  /**
   * Revokes a key of the organisation; revoked keys answer 401 from the next request on. Revoking
   * an already revoked key is a no-op; the organisation's last organisation key cannot be revoked (409),
   * or nobody could administer it any more.
   */
  async revoke(organisationId: string, id: string): Promise<void> {
    if (!isUuid(id)) throw notFound('API key', id);
    // Other replicas hear of it from the database (api_key_change_notifications); answer once they have.
    const notification = this.cache.whenHeard(keyChange(id), REVOCATION_WAIT_MS);
    let outcome: Awaited<ReturnType<ApiKeyRepository['revoke']>> = 'none';
    try {
      outcome = await this.keys.revoke(organisationId, id);
    } finally {
      this.cache.invalidateKey(id);
      if (outcome !== 'revoked') notification.cancel();
    }
    if (outcome === 'revoked') return notification.heard;
    if (outcome === 'last_organisation_key')
      throw conflict("This is the organisation's last organisation key: issue another organisation key before revoking it", undefined, 'last_organisation_key');
    if (!(await this.keys.exists(organisationId, id))) throw notFound('API key', id);
  }
}
