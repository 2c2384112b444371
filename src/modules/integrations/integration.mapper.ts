import type { Integration } from '../../generated/prisma/client';
import { unixSeconds } from '../../http/openai-shapes';
import { optionsOf } from './integration.repository';
import type { IntegrationType } from './integration.types';

/** The REST integration object. Credentials are never part of it, not even masked. */
export function toIntegrationJson(row: Integration) {
  return {
    id: row.id,
    object: 'integration' as const,
    slug: row.slug,
    provider: row.provider,
    name: row.name,
    options: optionsOf(row),
    organisation_id: row.organisationId,
    workspace_id: row.workspaceId,
    created_at: unixSeconds(row.createdAt),
  };
}

export function toDeletedIntegrationJson(row: Integration) {
  return { id: row.id, object: 'integration' as const, deleted: true as const };
}

/** The GraphQL integration object, likewise without credentials. */
export function toIntegrationType(row: Integration): IntegrationType {
  return {
    id: row.id,
    slug: row.slug,
    provider: row.provider,
    name: row.name,
    options: optionsOf(row),
    organisationId: row.organisationId,
    workspaceId: row.workspaceId,
    createdAt: row.createdAt,
  };
}
