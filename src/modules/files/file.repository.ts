import type { Scope } from '../../auth/scope';
import type { Tx } from '../../db/prisma-errors';
import { inScope, scopeSql } from '../../db/scope';
import type { PrismaClient } from '../../db/database';
import type { Prisma, File as FileRow } from '../../generated/prisma/client';
import { storedPurpose, type FilePurpose } from './file.schemas';

/** The gateway's internal file model (what services and the fine-tuning module see). */
export interface GatewayFile {
  id: string;
  organisationId: string;
  workspaceId: string;
  bytes: number;
  createdAt: Date;
  filename: string;
  purpose: FilePurpose;
  /** Always `processed`: a file is recorded only once it is stored (and, for datasets, valid). */
  status: string;
  /** Lowercase hex SHA-256 of the content. */
  sha256: string;
  /** Where the content lives in the FileStore. */
  storageKey: string;
}

export interface NewFileRow {
  id: string;
  filename: string;
  purpose: FilePurpose;
  bytes: number;
  sha256: string;
  storageKey: string;
}

function toModel(row: FileRow): GatewayFile {
  return {
    id: row.id,
    organisationId: row.organisationId,
    workspaceId: row.workspaceId,
    bytes: Number(row.bytes),
    createdAt: row.createdAt,
    filename: row.filename,
    purpose: storedPurpose.parse(row.purpose),
    status: row.status,
    sha256: row.sha256,
    storageKey: row.storageKey,
  };
}

export interface FilePageQuery {
  purpose?: FilePurpose;
  order: 'asc' | 'desc';
  /** Position of the cursor file: the page starts strictly after it in the chosen order. */
  after?: { createdAt: Date; id: string };
  take: number;
}

/** File rows, always within one organisation's workspace. */
export class FileRepository {
  constructor(private readonly prisma: PrismaClient) {}

  async findById(scope: Scope, id: string): Promise<GatewayFile | null> {
    const row = await this.prisma.file.findFirst({ where: { ...inScope(scope), id } });
    return row ? toModel(row) : null;
  }

  async findManyByIds(scope: Scope, ids: readonly string[]): Promise<GatewayFile[]> {
    const rows = await this.prisma.file.findMany({ where: { ...inScope(scope), id: { in: [...ids] } } });
    return rows.map(toModel);
  }

  /** Ordered by (created_at, id), which is total, so an id cursor is stable under concurrent uploads. */
  async page(scope: Scope, query: FilePageQuery): Promise<GatewayFile[]> {
    const beyond = query.order === 'desc' ? 'lt' : 'gt';
    const where: Prisma.FileWhereInput = {
      ...inScope(scope),
      ...(query.purpose ? { purpose: query.purpose } : {}),
      ...(query.after
        ? {
            OR: [{ createdAt: { [beyond]: query.after.createdAt } }, { createdAt: query.after.createdAt, id: { [beyond]: query.after.id } }],
          }
        : {}),
    };
    const rows = await this.prisma.file.findMany({
      where,
      orderBy: [{ createdAt: query.order }, { id: query.order }],
      take: query.take,
    });
    return rows.map(toModel);
  }

  async create(scope: Scope, data: NewFileRow): Promise<GatewayFile> {
    return toModel(await this.prisma.file.create({ data: { ...inScope(scope), ...data, bytes: BigInt(data.bytes) } }));
  }

  /**
   * Deletes the file unless a guard says what still needs it: the deleted file, `{ neededBy }`, or null
   * when the scope has no file with that id. The row is locked first, so a fine-tuning job being
   * recorded for this file meanwhile is either committed (and seen by the guards) or finds it gone.
   */
  async delete(scope: Scope, id: string, guards: readonly DeletionGuard[]): Promise<GatewayFile | { neededBy: string } | null> {
    return this.prisma.$transaction(async (tx) => {
      const locked = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM files WHERE id = ${id}::uuid AND ${scopeSql(scope)} FOR UPDATE`;
      if (!locked.length) return null;
      for (const guard of guards) {
        const neededBy = await guard(tx, scope, id);
        if (neededBy !== null) return { neededBy };
      }
      return toModel(await tx.file.delete({ where: { id, ...inScope(scope) } }));
    });
  }
}

/** What still needs a file about to be deleted (a sentence), or null; runs in the deletion's transaction. */
export type DeletionGuard = (tx: Tx, scope: Scope, fileId: string) => Promise<string | null>;
