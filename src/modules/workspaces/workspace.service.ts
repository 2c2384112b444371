import type { Caller, Scope } from '../../auth/scope';
import { isOrganisationKey } from '../../auth/scope';
import type { PrismaClient } from '../../db/database';
import { isUniqueViolation, type Tx } from '../../db/prisma-errors';
import { badRequest, conflict, forbidden, notFound } from '../../errors';
import { isUuid, parseInput, type Unvalidated } from '../../validation/parse';
import type { Workspace } from '../../generated/prisma/client';
import { createWorkspaceSchema, type CreateWorkspaceInput } from './workspace.schemas';

export const DEFAULT_WORKSPACE_SLUG = 'default';


/** Runs inside the transaction that creates a workspace (default labels, default collection, …). */
export type WorkspaceInitialiser = (tx: Tx, scope: Scope) => Promise<void>;

export class WorkspaceService {
  private readonly initialisers: WorkspaceInitialiser[] = [];

  constructor(private readonly prisma: PrismaClient) {}

  /** Domains that keep per-workspace defaults register here, so every new workspace gets them. */
  onWorkspaceCreated(initialiser: WorkspaceInitialiser): void {
    this.initialisers.push(initialiser);
  }

  async create(organisationId: string, input: Unvalidated<CreateWorkspaceInput>): Promise<Workspace> {
    const data = parseInput(createWorkspaceSchema, input);
    try {
      return await this.prisma.$transaction((tx) => this.createIn(tx, organisationId, data));
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict(`A workspace with slug '${data.slug}' already exists`, 'slug', 'workspace_slug_taken');
      throw err;
    }
  }

  /** Creates a workspace with its defaults inside a caller's transaction. */
  async createIn(tx: Tx, organisationId: string, data: { name: string; slug: string }): Promise<Workspace> {
    const workspace = await tx.workspace.create({ data: { organisationId, name: data.name, slug: data.slug } });
    for (const init of this.initialisers) await init(tx, { organisationId, workspaceId: workspace.id });
    return workspace;
  }

  list(organisationId: string): Promise<Workspace[]> {
    return this.prisma.workspace.findMany({ where: { organisationId }, orderBy: [{ createdAt: 'asc' }, { slug: 'asc' }] });
  }

  /** Finds a workspace of the organisation by UUID or slug; null when there is none. */
  find(organisationId: string, ref: string): Promise<Workspace | null> {
    const where = isUuid(ref) ? { organisationId, id: ref } : { organisationId, slug: ref };
    return this.prisma.workspace.findFirst({ where });
  }

  /**
   * The scope a request works in. A workspace key works in its own workspace only; an organisation
   * key names one (UUID or slug) or gets its organisation's `default` workspace.
   */
  async resolveScope(caller: Caller, ref?: string | null, organisationRef?: string | null): Promise<Scope> {
    if (organisationRef != null && organisationRef !== caller.organisationId) {
      if (!isUuid(organisationRef)) throw badRequest('organisation_id must be a UUID', 'organisation_id');
      throw notFound('Organisation', organisationRef);
    }
    const wanted = ref == null || ref === '' ? null : ref;
    if (!isOrganisationKey(caller)) {
      const own = { organisationId: caller.organisationId, workspaceId: caller.workspaceId! };
      if (wanted === null || wanted === own.workspaceId) return own;
      const named = await this.find(caller.organisationId, wanted);
      if (named?.id === own.workspaceId) return own;
      throw forbidden('This API key is limited to its own workspace');
    }
    const workspace = await this.find(caller.organisationId, wanted ?? DEFAULT_WORKSPACE_SLUG);
    if (!workspace) {
      if (wanted === null) throw badRequest('workspace_id is required: this organisation has no default workspace', 'workspace_id');
      throw notFound('Workspace', wanted);
    }
    return { organisationId: caller.organisationId, workspaceId: workspace.id };
  }
}
