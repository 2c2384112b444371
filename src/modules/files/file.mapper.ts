import type { GatewayFile } from './file.repository';
import type { FilePurposeEnum, FileType } from './file.types';

const unixSeconds = (date: Date) => Math.floor(date.getTime() / 1000);

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
export function toFileListJson(page: { items: GatewayFile[]; hasMore: boolean }) {
  const data = page.items.map(toFileJson);
  return {
    object: 'list' as const,
    data,
    first_id: data.length ? data[0].id : null,
    last_id: data.length ? data[data.length - 1].id : null,
    has_more: page.hasMore,
  };
}

/** The GraphQL file object. */
export function toFileType(file: GatewayFile): FileType {
  return {
    id: file.id,
    filename: file.filename,
    purpose: file.purpose as FilePurposeEnum,
    bytes: file.bytes,
    sha256: file.sha256,
    status: file.status,
    organisationId: file.organisationId,
    workspaceId: file.workspaceId,
    createdAt: file.createdAt,
  };
}
