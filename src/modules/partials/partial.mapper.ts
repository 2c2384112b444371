import type { Collection, PromptPartial, PromptPartialVersion } from '../../generated/prisma/client';
import type { CollectionType, PromptPartialType, PromptPartialVersionType } from './partial.types';

/** REST full record (seed §2.2): the partial with its default version; `version` is an integer. */
export function toPartialJson(partial: PromptPartial, version: PromptPartialVersion) {
  return {
    id: partial.id,
    slug: partial.slug,
    name: partial.name,
    collection_id: partial.collectionId,
    string: version.string,
    version: version.version,
    version_description: version.description,
    prompt_partial_version_id: version.id,
    created_at: partial.createdAt.toISOString(),
    last_updated_at: partial.lastUpdatedAt.toISOString(),
    status: partial.status,
  };
}

/** REST summary record (seed §2.3), an element of the list. */
export function toPartialSummaryJson(partial: PromptPartial) {
  return {
    id: partial.id,
    slug: partial.slug,
    name: partial.name,
    collection_id: partial.collectionId,
    created_at: partial.createdAt.toISOString(),
    last_updated_at: partial.lastUpdatedAt.toISOString(),
    status: partial.status,
    object: 'partial' as const,
  };
}

/** REST version record (seed §2.4); here `version` is a string. */
export function toPartialVersionJson(partial: PromptPartial, version: PromptPartialVersion) {
  return {
    prompt_partial_id: partial.id,
    prompt_partial_version_id: version.id,
    slug: partial.slug,
    version: String(version.version),
    string: version.string,
    description: version.description,
    created_at: version.createdAt.toISOString(),
    prompt_version_status: version.status,
    object: 'partial' as const,
  };
}

export function toPromptPartialType(partial: PromptPartial): PromptPartialType {
  return {
    id: partial.id,
    slug: partial.slug,
    name: partial.name,
    collectionId: partial.collectionId,
    status: partial.status,
    createdAt: partial.createdAt,
    lastUpdatedAt: partial.lastUpdatedAt,
    organisationId: partial.organisationId,
    workspaceId: partial.workspaceId,
    defaultVersionId: partial.defaultVersionId,
  };
}

export function toPromptPartialVersionType(version: PromptPartialVersion): PromptPartialVersionType {
  return {
    id: version.id,
    partialId: version.partialId,
    version: version.version,
    string: version.string,
    description: version.description,
    status: version.status,
    createdAt: version.createdAt,
  };
}

export function toCollectionType(collection: Collection): CollectionType {
  return {
    id: collection.id,
    name: collection.name,
    slug: collection.slug,
    isDefault: collection.isDefault,
    createdAt: collection.createdAt,
    lastUpdatedAt: collection.lastUpdatedAt,
  };
}
