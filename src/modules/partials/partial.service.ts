import type { z } from 'zod';
import type { Scope } from '../../auth/scope';
import type { WorkspaceChanges } from '../../db/workspace-changes';
import { isUniqueViolation, type Tx } from '../../db/prisma-errors';
import { GatewayError, conflict, notFound } from '../../errors';
import type { Collection, PromptPartial, PromptPartialVersion } from '../../generated/prisma/client';
import { isUuid, parseInput, type Input } from '../../validation/parse';
import type { PartialRepository } from './partial.repository';
import {
  createPartialSchema,
  listPartialsSchema,
  makeDefaultSchema,
  updatePartialSchema,
  type CreatePartialInput,
  type ListPartialsInput,
  type MakeDefaultInput,
  type UpdatePartialInput,
} from './partial.schemas';

/** A partial with one of its versions: the default one (reads) or the one a write saved. */
export interface PartialWithVersion {
  partial: PromptPartial;
  version: PromptPartialVersion;
}

const MAX_SLUG_LENGTH = 64;
/** Concurrent creations may race for the same slug; the loser picks again. */
const SLUG_ATTEMPTS = 20;

/**
 * The slug a name gives: ASCII letters and digits in lower case, every other run of characters one
 * `-`. A name without any gives `partial`; a slug never has the shape of a UUID, so a path parameter
 * is read unambiguously as an id or a slug.
 */
export function slugify(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+/, '')
    .slice(0, MAX_SLUG_LENGTH)
    .replace(/-+$/, '');
  if (!slug) return 'partial';
  return isUuid(slug) ? `partial-${slug}` : slug;
}

const partialNotFound = (ref: string) => notFound('Prompt partial', ref);

export class PartialService {
  constructor(
    private readonly partials: PartialRepository,
    /** Changes to a default text are answered once every replica has dropped what hosted chat cached of it. */
    private readonly changes: WorkspaceChanges,
  ) {}

  /** Workspace initialiser: every workspace's default collection. */
  readonly createDefaultCollection = async (tx: Tx, scope: Scope): Promise<void> => {
    await this.partials.ensureDefaultCollection(scope, tx);
  };

  /** Creates a partial with version 1 as its default version. */
  async create(scope: Scope, input: Input<CreatePartialInput>): Promise<PartialWithVersion> {
    const data = parseInput(createPartialSchema, input);
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.partials.transaction(async (tx) => {
          const collection = data.collectionId ? await this.collection(scope, data.collectionId, tx) : await this.defaultCollection(scope, tx);
          const slug = await this.freeSlug(scope, slugify(data.name), tx);
          const created = await this.partials.create(scope, { collectionId: collection.id, slug, name: data.name }, tx);
          const version = await this.partials.createVersion(
            scope,
            { partialId: created.id, version: 1, string: data.string, description: data.versionDescription ?? '' },
            tx,
          );
          const partial = await this.partials.update(scope, created.id, { defaultVersionId: version.id }, tx);
          return { partial, version };
        });
      } catch (err) {
        if (!isUniqueViolation(err)) throw err;
        if (attempt >= SLUG_ATTEMPTS) throw conflict('Could not choose a unique slug for this name; try again', 'name', 'partial_slug_taken');
      }
    }
  }

  /** Partials of the workspace; archived ones only when `status` asks for them. */
  async list(scope: Scope, input: Input<ListPartialsInput> = {}): Promise<PromptPartial[]> {
    const { collectionId, status } = parseInput(listPartialsSchema, input);
    if (collectionId) await this.collection(scope, collectionId);
    return this.partials.list(scope, { collectionId, status: status ?? 'active' });
  }

  /** A partial by id or slug (archived ones too) with its default version. */
  async get(scope: Scope, ref: string): Promise<PartialWithVersion> {
    const found = await this.partials.findByRefWithDefault(scope, ref);
    if (!found) throw partialNotFound(ref);
    const { defaultVersion, ...partial } = found;
    const version = defaultVersion ?? (await this.partials.latestVersion(scope, partial.id));
    if (!version) throw partialNotFound(ref);
    return { partial, version };
  }

  /**
   * Renames, (un)archives and saves text. A `string` that differs from the newest version's saves
   * version max+1 (not yet the default: makeDefault publishes it); `description` describes that new
   * version, or, without a text change, the newest one. The partial's row is locked for the whole
   * transaction, so concurrent updates number their versions without gaps or duplicates.
   */
  async update(scope: Scope, ref: string, input: Input<UpdatePartialInput>): Promise<PartialWithVersion> {
    const data = parseInput(updatePartialSchema, input);
    const { changed, ...result } = await this.changes.announce(
      scope.workspaceId,
      () => this.updateInTransaction(scope, ref, data),
      (r) => r.changed,
    );
    return result;
  }

  private updateInTransaction(scope: Scope, ref: string, data: z.output<typeof updatePartialSchema>): Promise<PartialWithVersion & { changed: boolean }> {
    return this.partials.transaction(async (tx) => {
      const id = await this.partials.lockByRef(scope, ref, tx);
      if (!id) throw partialNotFound(ref);
      const current = await this.partials.findByRef(scope, id, tx);
      const latest = await this.partials.latestVersion(scope, id, tx);
      if (!current || !latest) throw partialNotFound(ref);

      let version = latest;
      if (data.string !== undefined && data.string !== latest.string) {
        version = await this.partials.createVersion(
          scope,
          { partialId: id, version: latest.version + 1, string: data.string, description: data.description ?? '' },
          tx,
        );
      } else if (data.description !== undefined && data.description !== latest.description) {
        version = await this.partials.updateVersionDescription(scope, latest.id, data.description, tx);
      }

      const changes: { name?: string; status?: string } = {};
      if (data.name !== undefined && data.name !== current.name) changes.name = data.name;
      if (data.status !== undefined && data.status !== current.status) changes.status = data.status;
      const changed = version !== latest || Object.keys(changes).length > 0;
      const partial = changed ? await this.partials.update(scope, id, changes, tx) : current;
      return { partial, version, changed };
    });
  }

  async delete(scope: Scope, ref: string): Promise<void> {
    const deleted = await this.changes.announce(
      scope.workspaceId,
      () => this.partials.delete(scope, ref),
      (wrote) => wrote,
    );
    if (!deleted) throw partialNotFound(ref);
  }

  /** A partial's versions, newest first. */
  async versions(scope: Scope, ref: string): Promise<{ partial: PromptPartial; versions: PromptPartialVersion[] }> {
    const partial = await this.partials.findByRef(scope, ref);
    if (!partial) throw partialNotFound(ref);
    return { partial, versions: await this.partials.versionsOf(scope, [partial.id]) };
  }

  /** Publishes version `n`: the default version, the one a read returns. */
  async makeDefault(scope: Scope, ref: string, input: Input<MakeDefaultInput>): Promise<PartialWithVersion> {
    const { version: number } = parseInput(makeDefaultSchema, input);
    const publish = () =>
      this.partials.transaction(async (tx) => {
        const id = await this.partials.lockByRef(scope, ref, tx);
        if (!id) throw partialNotFound(ref);
        const version = await this.partials.findVersion(scope, id, number, tx);
        if (!version) {
          throw new GatewayError('not_found', `Version ${number} of prompt partial '${ref}' not found`, { path: 'version', code: 'not_found' });
        }
        const partial = await this.partials.update(scope, id, { defaultVersionId: version.id }, tx);
        return { partial, version };
      });
    return this.changes.announce(scope.workspaceId, publish);
  }

  // Batched reads for the GraphQL DataLoaders and federation references: one statement each;
  // malformed, unknown and other tenants' ids are left out.

  async findMany(scope: Scope, ids: readonly string[]): Promise<PromptPartial[]> {
    const valid = ids.filter(isUuid);
    return valid.length ? this.partials.findManyByIds(scope, valid) : [];
  }

  async versionsOfPartials(scope: Scope, partialIds: readonly string[]): Promise<PromptPartialVersion[]> {
    const valid = partialIds.filter(isUuid);
    return valid.length ? this.partials.versionsOf(scope, valid) : [];
  }

  async versionsByIds(scope: Scope, ids: readonly string[]): Promise<PromptPartialVersion[]> {
    const valid = ids.filter(isUuid);
    return valid.length ? this.partials.versionsByIds(scope, valid) : [];
  }

  /** The default version's text of each partial named by slug, in one statement (unknown slugs are absent). */
  async defaultTexts(scope: Scope, slugs: readonly string[]): Promise<Map<string, string>> {
    if (!slugs.length) return new Map();
    return new Map((await this.partials.defaultTextsBySlug(scope, slugs)).map((p) => [p.slug, p.text]));
  }

  async collectionsByIds(scope: Scope, ids: readonly string[]): Promise<Collection[]> {
    const valid = ids.filter(isUuid);
    return valid.length ? this.partials.collectionsByIds(scope, valid) : [];
  }

  private async collection(scope: Scope, id: string, tx?: Tx): Promise<Collection> {
    const collection = await this.partials.findCollection(scope, id, tx);
    if (!collection) throw new GatewayError('not_found', `Collection '${id}' not found`, { path: 'collectionId', code: 'not_found' });
    return collection;
  }

  /** Workspaces created before collections existed get theirs on first use. */
  private async defaultCollection(scope: Scope, tx: Tx): Promise<Collection> {
    return (await this.partials.findDefaultCollection(scope, tx)) ?? this.partials.ensureDefaultCollection(scope, tx);
  }

  private async freeSlug(scope: Scope, base: string, tx: Tx): Promise<string> {
    const taken = new Set(await this.partials.slugsLike(scope, base, tx));
    if (!taken.has(base)) return base;
    for (let n = 2; ; n++) if (!taken.has(`${base}-${n}`)) return `${base}-${n}`;
  }
}
