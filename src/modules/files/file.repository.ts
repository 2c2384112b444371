import type { Scope } from '../../auth/scope';
import { inScope } from '../../db/scope';
import type { PrismaClient } from '../../db/database';
import { Prisma, type File as FileRow } from '../../generated/prisma/client';
import { filePurpose, type FilePurpose } from './file.schemas';

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
    purpose: filePurpose.parse(row.purpose),
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

  /** The deleted file, or null when the scope has no file with that id. */
  async delete(scope: Scope, id: string): Promise<GatewayFile | null> {
    const file = await this.findById(scope, id);
    if (!file) return null;
    const { count } = await this.prisma.file.deleteMany({ where: { ...inScope(scope), id } });
    return count > 0 ? file : null;
  }
}

/** True when a write broke a foreign key (Prisma's P2003), e.g. deleting a file a job still uses. */
export function isForeignKeyViolation(err: unknown): boolean {
  return err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2003';
}
