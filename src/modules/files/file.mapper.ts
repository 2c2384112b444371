import { cursorListJson, unixSeconds, type Page } from '../../http/openai-shapes';
import type { GatewayFile } from './file.repository';
import type { FileType } from './file.types';

/** OpenAI's file object (what the official SDKs parse). */
export function toFileJson(file: GatewayFile) {
  return {
    id: file.id,
    object: 'file' as const,
    bytes: file.bytes,
    created_at: unixSeconds(file.createdAt),
    filename: file.filename,
    purpose: file.purpose,
    status: file.status,
    status_details: null,
  };
}

export function toDeletedFileJson(file: GatewayFile) {
  return { id: file.id, object: 'file' as const, deleted: true as const };
}

/** The list answer of GET /v1/files. */
export const toFileListJson = (page: Page<GatewayFile>) => cursorListJson(page, toFileJson);

/** The GraphQL file object. */
export function toFileType(file: GatewayFile): FileType {
  return {
    id: file.id,
    filename: file.filename,
    purpose: file.purpose,
    bytes: file.bytes,
    sha256: file.sha256,
    status: file.status,
    organisationId: file.organisationId,
    workspaceId: file.workspaceId,
    createdAt: file.createdAt,
  };
}
