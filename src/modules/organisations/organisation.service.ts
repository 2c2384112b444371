import type { Tx } from '../../db/prisma-errors';
import type { Organisation, Workspace } from '../../generated/prisma/client';
import type { ApiKeyService } from '../api-keys/api-key.service';
import { DEFAULT_WORKSPACE_SLUG, type WorkspaceService } from '../workspaces/workspace.service';
import type { OrganisationRepository } from './organisation.repository';

export interface NewOrganisation {
  organisation: Organisation;
  workspace: Workspace;
  /** The organisation key's secret, shown once. */
  key: string;
}

export class OrganisationService {
  constructor(
    private readonly organisations: OrganisationRepository,
    private readonly workspaces: WorkspaceService,
    private readonly apiKeys: ApiKeyService,
  ) {}

  /** An organisation with a `default` workspace (and its defaults) and an organisation key. */
  async create(name: string, key?: string): Promise<NewOrganisation> {
    return this.organisations.transaction((tx) => this.createIn(tx, name, key));
  }

  /**
   * On first start with an empty database: a default organisation, workspace and key (the given
   * one, else a new one). Returns null when the database already has an organisation.
   */
  async bootstrap(key?: string): Promise<NewOrganisation | null> {
    return this.organisations.withBootstrapLock((tx, empty) => (empty ? this.createIn(tx, 'Default organisation', key) : Promise.resolve(null)));
  }

  private async createIn(tx: Tx, name: string, key?: string): Promise<NewOrganisation> {
    const organisation = await this.organisations.create(tx, name);
    const workspace = await this.workspaces.createIn(tx, organisation.id, { name: 'Default workspace', slug: DEFAULT_WORKSPACE_SLUG });
    const issued = await this.apiKeys.issue({ organisationId: organisation.id, workspaceId: null, name: 'Organisation key', key }, tx);
    return { organisation, workspace, key: issued.key };
  }

  /** Every organisation: for the operator's CLI, which serves all tenants. */
  list(): Promise<Organisation[]> {
    return this.organisations.list();
  }

  exists(id: string): Promise<boolean> {
    return this.organisations.exists(id);
  }
}
