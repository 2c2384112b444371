import type { Caller, Scope } from '../../auth/scope';
import { isUniqueViolation, type Tx } from '../../db/prisma-errors';
import { conflict, forbidden, invalidField, notFound } from '../../errors';
import type { Workspace } from '../../generated/prisma/client';
import { isUuid, parseInput, type Input } from '../../validation/parse';
import type { WorkspaceRepository } from './workspace.repository';
import { createWorkspaceSchema, type CreateWorkspaceInput } from './workspace.schemas';

export const DEFAULT_WORKSPACE_SLUG = 'default';

/** Runs inside the transaction that creates a workspace (default labels, default collection, …). */
export type WorkspaceInitialiser = (tx: Tx, scope: Scope) => Promise<void>;

export class WorkspaceService {
  private readonly initialisers: WorkspaceInitialiser[] = [];

  constructor(private readonly workspaces: WorkspaceRepository) {}

  /** Domains that keep per-workspace defaults register here, so every new workspace gets them. */
  onWorkspaceCreated(initialiser: WorkspaceInitialiser): void {
    this.initialisers.push(initialiser);
  }

  async create(organisationId: string, input: Input<CreateWorkspaceInput>): Promise<Workspace> {
    const data = parseInput(createWorkspaceSchema, input);
    try {
      return await this.workspaces.transaction((tx) => this.createIn(tx, organisationId, data));
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict(`A workspace with slug '${data.slug}' already exists`, 'slug', 'workspace_slug_taken');
      throw err;
    }
  }

  /** Creates a workspace with its defaults inside a caller's transaction. */
  async createIn(tx: Tx, organisationId: string, data: { name: string; slug: string }): Promise<Workspace> {
    const workspace = await this.workspaces.create(tx, organisationId, data);
    for (const init of this.initialisers) await init(tx, { organisationId, workspaceId: workspace.id });
    return workspace;
  }

  list(organisationId: string): Promise<Workspace[]> {
    return this.workspaces.list(organisationId);
  }

  /** Finds a workspace of the organisation by UUID or slug; null when there is none. */
  find(organisationId: string, ref: string): Promise<Workspace | null> {
    return this.workspaces.findByRef(organisationId, ref);
  }

  /**
   * The scope a request works in. A workspace key works in its own workspace only; an organisation
   * key names one (UUID or slug) or gets its organisation's `default` workspace.
   */
  async resolveScope(caller: Caller, ref?: string | null, organisationRef?: string | null): Promise<Scope> {
    if (organisationRef != null && organisationRef !== caller.organisationId) {
      if (!isUuid(organisationRef)) throw invalidField('organisationId', 'must be a UUID');
      throw notFound('Organisation', organisationRef);
    }
    const wanted = ref == null || ref === '' ? null : ref;
    if (caller.workspaceId !== null) {
      const own = { organisationId: caller.organisationId, workspaceId: caller.workspaceId };
      if (wanted === null || wanted === own.workspaceId) return own;
      const named = await this.find(caller.organisationId, wanted);
      if (named?.id === own.workspaceId) return own;
      throw forbidden('This API key is limited to its own workspace');
    }
    // The default workspace usually came with the key (ApiKeyService.authenticate): no lookup then.
    const known = wanted === null ? caller.defaultWorkspaceId : undefined;
    const workspaceId = known !== undefined ? known : ((await this.find(caller.organisationId, wanted ?? DEFAULT_WORKSPACE_SLUG))?.id ?? null);
    if (!workspaceId) {
      if (wanted === null) throw invalidField('workspaceId', 'is required: this organisation has no default workspace');
      throw notFound('Workspace', wanted);
    }
    return { organisationId: caller.organisationId, workspaceId };
  }
}
