import type { ApiKey } from '../../generated/prisma/client';

/** A key as listed: its prefix, never its secret or hash. */
export function toApiKeyJson(key: ApiKey) {
  return {
    id: key.id,
    object: 'api_key',
    name: key.name,
    prefix: key.prefix,
    organisation_id: key.organisationId,
    workspace_id: key.workspaceId,
    created_at: key.createdAt.toISOString(),
    revoked_at: key.revokedAt?.toISOString() ?? null,
  };
}
