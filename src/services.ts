import type { Config } from './config';
import type { Database } from './db/database';
import type { Logger } from './logger';
import { ApiKeyService } from './modules/api-keys/api-key.service';
import { LabelRepository } from './modules/labels/label.repository';
import { LabelService } from './modules/labels/label.service';
import { OrganisationService } from './modules/organisations/organisation.service';
import { WorkspaceService } from './modules/workspaces/workspace.service';

/** The domain services, built once per process and shared by both faces. */
export function createServices(db: Database, _config: Config, _logger: Logger) {
  const { prisma } = db;
  const workspaces = new WorkspaceService(prisma);
  const apiKeys = new ApiKeyService(prisma, workspaces);
  const organisations = new OrganisationService(prisma, workspaces, apiKeys);
  const labels = new LabelService(new LabelRepository(prisma));
  workspaces.onWorkspaceCreated(labels.createDefaults);
  return { db, workspaces, apiKeys, organisations, labels };
}

export type Services = ReturnType<typeof createServices>;
