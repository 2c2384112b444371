import type { Scope } from '../../auth/scope';
import { likeLiteral } from '../../db/like';
import { inScope } from '../../db/scope';
import type { PrismaClient } from '../../db/database';
import type { Tx } from '../../db/prisma-errors';
import { Prisma, type Collection, type PromptPartial, type PromptPartialVersion } from '../../generated/prisma/client';
import { isUuid } from '../../validation/parse';

/** A partial named by UUID (its id) or otherwise by its slug. */
const byRef = (ref: string) => (isUuid(ref) ? { id: ref } : { slug: ref });

export const DEFAULT_COLLECTION_SLUG = 'default';

export type PartialWithDefault = PromptPartial & { defaultVersion: PromptPartialVersion | null };

/** Collections, prompt partials and their versions, always within one organisation's workspace. */
export class PartialRepository {
  constructor(private readonly prisma: PrismaClient) {}

  /** Runs `work` in one transaction; generous limits because updates of one partial queue on its row lock. */
  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.prisma.$transaction(work, { maxWait: 10_000, timeout: 30_000 });
  }

  // Collections

  findDefaultCollection(scope: Scope, tx: Tx | PrismaClient = this.prisma): Promise<Collection | null> {
    return tx.collection.findFirst({ where: { ...inScope(scope), isDefault: true } });
  }

  /** The workspace's default collection, created when missing (idempotent). */
  ensureDefaultCollection(scope: Scope, tx: Tx | PrismaClient = this.prisma): Promise<Collection> {
    return tx.collection.upsert({
      where: { workspaceId_slug: { workspaceId: scope.workspaceId, slug: DEFAULT_COLLECTION_SLUG }, organisationId: scope.organisationId },
      create: { ...inScope(scope), slug: DEFAULT_COLLECTION_SLUG, name: 'Default', isDefault: true },
      update: {},
    });
  }

  findCollection(scope: Scope, id: string, tx: Tx | PrismaClient = this.prisma): Promise<Collection | null> {
    return tx.collection.findFirst({ where: { ...inScope(scope), id } });
  }

  collectionsByIds(scope: Scope, ids: readonly string[]): Promise<Collection[]> {
    return this.prisma.collection.findMany({ where: { ...inScope(scope), id: { in: [...ids] } } });
  }

  // Partials

  findByRef(scope: Scope, ref: string, tx: Tx | PrismaClient = this.prisma): Promise<PromptPartial | null> {
    return tx.promptPartial.findFirst({ where: { ...inScope(scope), ...byRef(ref) } });
  }

  findManyByIds(scope: Scope, ids: readonly string[]): Promise<PromptPartial[]> {
    return this.prisma.promptPartial.findMany({ where: { ...inScope(scope), id: { in: [...ids] } } });
  }

  findByRefWithDefault(scope: Scope, ref: string): Promise<PartialWithDefault | null> {
    return this.prisma.promptPartial.findFirst({ where: { ...inScope(scope), ...byRef(ref) }, include: { defaultVersion: true } });
  }

  /** The default version's text of the scope's partials with these slugs, in one statement (a join). */
  defaultTextsBySlug(scope: Scope, slugs: readonly string[]): Promise<{ slug: string; text: string }[]> {
    return this.prisma.$queryRaw<{ slug: string; text: string }[]>`
      SELECT p.slug, v.string AS text FROM prompt_partials p JOIN prompt_partial_versions v ON v.id = p.default_version_id
      WHERE p.organisation_id = ${scope.organisationId}::uuid AND p.workspace_id = ${scope.workspaceId}::uuid AND p.slug = ANY(${[...slugs]}::text[])`;
  }

  /**
   * Locks the partial's row until the transaction ends (SELECT … FOR UPDATE), so writers of one
   * partial take turns; returns its id, or null when the scope has no such partial.
   */
  async lockByRef(scope: Scope, ref: string, tx: Tx): Promise<string | null> {
    const match = isUuid(ref) ? Prisma.sql`id = ${ref}::uuid` : Prisma.sql`slug = ${ref}`;
    const rows = await tx.$queryRaw<{ id: string }[]>`
      SELECT id::text AS id FROM prompt_partials
      WHERE organisation_id = ${scope.organisationId}::uuid AND workspace_id = ${scope.workspaceId}::uuid AND ${match}
      FOR UPDATE`;
    return rows[0]?.id ?? null;
  }

  list(scope: Scope, filter: { collectionId?: string; status: string }): Promise<PromptPartial[]> {
    return this.prisma.promptPartial.findMany({
      where: { ...inScope(scope), status: filter.status, ...(filter.collectionId ? { collectionId: filter.collectionId } : {}) },
      orderBy: [{ createdAt: 'asc' }, { slug: 'asc' }],
    });
  }

  /** The slugs of the workspace that are `base` or `base-…`. */
  async slugsLike(scope: Scope, base: string, tx: Tx | PrismaClient = this.prisma): Promise<string[]> {
    const rows = await tx.promptPartial.findMany({
      where: { ...inScope(scope), OR: [{ slug: base }, { slug: { startsWith: likeLiteral(`${base}-`) } }] },
      select: { slug: true },
    });
    return rows.map((r) => r.slug);
  }

  create(scope: Scope, data: { collectionId: string; slug: string; name: string }, tx: Tx): Promise<PromptPartial> {
    return tx.promptPartial.create({ data: { ...inScope(scope), ...data } });
  }

  update(scope: Scope, id: string, data: { name?: string; status?: string; defaultVersionId?: string }, tx: Tx): Promise<PromptPartial> {
    return tx.promptPartial.update({ where: { id, ...inScope(scope) }, data: { ...data, lastUpdatedAt: new Date() } });
  }

  /** Deletes the partial and (by cascade) its versions; false when the scope has no such partial. */
  async delete(scope: Scope, ref: string): Promise<boolean> {
    const { count } = await this.prisma.promptPartial.deleteMany({ where: { ...inScope(scope), ...byRef(ref) } });
    return count > 0;
  }

  // Versions

  latestVersion(scope: Scope, partialId: string, tx: Tx | PrismaClient = this.prisma): Promise<PromptPartialVersion | null> {
    return tx.promptPartialVersion.findFirst({ where: { ...inScope(scope), partialId }, orderBy: { version: 'desc' } });
  }

  findVersion(scope: Scope, partialId: string, version: number, tx: Tx | PrismaClient = this.prisma): Promise<PromptPartialVersion | null> {
    return tx.promptPartialVersion.findFirst({ where: { ...inScope(scope), partialId, version } });
  }

  createVersion(scope: Scope, data: { partialId: string; version: number; string: string; description?: string }, tx: Tx): Promise<PromptPartialVersion> {
    return tx.promptPartialVersion.create({ data: { ...inScope(scope), ...data } });
  }

  updateVersionDescription(scope: Scope, id: string, description: string, tx: Tx): Promise<PromptPartialVersion> {
    return tx.promptPartialVersion.update({ where: { id, ...inScope(scope) }, data: { description } });
  }

  /** The versions of several partials in one statement, each partial's newest first. */
  versionsOf(scope: Scope, partialIds: readonly string[]): Promise<PromptPartialVersion[]> {
    return this.prisma.promptPartialVersion.findMany({
      where: { ...inScope(scope), partialId: { in: [...partialIds] } },
      orderBy: [{ partialId: 'asc' }, { version: 'desc' }],
    });
  }

  versionsByIds(scope: Scope, ids: readonly string[]): Promise<PromptPartialVersion[]> {
    return this.prisma.promptPartialVersion.findMany({ where: { ...inScope(scope), id: { in: [...ids] } } });
  }
}
