import type { Label } from '../../generated/prisma/client';
import type { LabelType } from './label.types';

/** The REST label object, in the reference interface's field names. */
export function toLabelJson(label: Label) {
  return {
    id: label.id,
    name: label.name,
    description: label.description,
    color_code: label.colorCode,
    organisation_id: label.organisationId,
    workspace_id: label.workspaceId,
    is_universal: label.isUniversal,
    created_at: label.createdAt.toISOString(),
    last_updated_at: label.lastUpdatedAt.toISOString(),
    status: label.status,
  };
}

/** The GraphQL label object. */
export function toLabelType(label: Label): LabelType {
  return {
    id: label.id,
    name: label.name,
    description: label.description,
    colorCode: label.colorCode,
    organisationId: label.organisationId,
    workspaceId: label.workspaceId,
    isUniversal: label.isUniversal,
    status: label.status,
    createdAt: label.createdAt,
    lastUpdatedAt: label.lastUpdatedAt,
  };
}
