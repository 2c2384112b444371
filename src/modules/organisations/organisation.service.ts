import type { PrismaClient } from '../../db/database';
import type { Tx } from '../../db/prisma-errors';
import type { Organisation, Workspace } from '../../generated/prisma/client';
import type { ApiKeyService } from '../api-keys/api-key.service';
import { DEFAULT_WORKSPACE_SLUG, type WorkspaceService } from '../workspaces/workspace.service';

export interface NewOrganisation {
  organisation: Organisation;
  workspace: Workspace;
  /** The organisation key's secret, shown once. */
  key: string;
}

/** Arbitrary constant: serialises first-start bootstrapping between processes sharing one database. */
const BOOTSTRAP_LOCK = 727_001;

export class OrganisationService {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly workspaces: WorkspaceService,
    private readonly apiKeys: ApiKeyService,
  ) {}

  /** An organisation with a `default` workspace (and its defaults) and an organisation key. */
  async create(name: string, key?: string): Promise<NewOrganisation> {
    return this.prisma.$transaction((tx) => this.createIn(tx, name, key));
  }

  /**
   * On first start with an empty database: a default organisation, workspace and key (the given
   * one, else a new one). Returns null when the database already has an organisation.
   */
  async bootstrap(key?: string): Promise<NewOrganisation | null> {
    return this.prisma.$transaction(async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(${BOOTSTRAP_LOCK})`;
      if ((await tx.organisation.count()) > 0) return null;
      return this.createIn(tx, 'Default organisation', key);
    });
  }

  private async createIn(tx: Tx, name: string, key?: string): Promise<NewOrganisation> {
    const organisation = await tx.organisation.create({ data: { name } });
    const workspace = await this.workspaces.createIn(tx, organisation.id, { name: 'Default workspace', slug: DEFAULT_WORKSPACE_SLUG });
    const issued = await this.apiKeys.issue(tx, { organisationId: organisation.id, workspaceId: null, name: 'Organisation key', key });
    return { organisation, workspace, key: issued.key };
  }

  exists(id: string): Promise<boolean> {
    return this.prisma.organisation.count({ where: { id } }).then((n) => n > 0);
  }
}
