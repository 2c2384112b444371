import type { Config } from './config';
import type { Database } from './db/database';
import type { Logger } from './logger';
import { loadMasterKey, SecretBox } from './crypto/secret-box';
import { ApiKeyService } from './modules/api-keys/api-key.service';
import { FileRepository } from './modules/files/file.repository';
import { FileService } from './modules/files/file.service';
import { FineTuningRepository } from './modules/fine-tuning/fine-tuning.repository';
import { FineTuningService } from './modules/fine-tuning/fine-tuning.service';
import { IntegrationRepository } from './modules/integrations/integration.repository';
import { IntegrationService } from './modules/integrations/integration.service';
import { LabelRepository } from './modules/labels/label.repository';
import { LabelService } from './modules/labels/label.service';
import { OrganisationService } from './modules/organisations/organisation.service';
import { PartialRepository } from './modules/partials/partial.repository';
import { PartialService } from './modules/partials/partial.service';
import { WorkspaceService } from './modules/workspaces/workspace.service';
import { ProviderRegistry } from './providers/registry';
import { LocalFileStore } from './storage/local-file-store';

/** The domain services, built once per process and shared by both faces. */
export function createServices(db: Database, config: Config, logger: Logger) {
  const { prisma } = db;
  const workspaces = new WorkspaceService(prisma);
  const apiKeys = new ApiKeyService(prisma, workspaces);
  const organisations = new OrganisationService(prisma, workspaces, apiKeys);
  const labels = new LabelService(new LabelRepository(prisma));
  workspaces.onWorkspaceCreated(labels.createDefaults);
  const partials = new PartialService(new PartialRepository(prisma));
  workspaces.onWorkspaceCreated(partials.createDefaultCollection);
  const integrations = new IntegrationService(new IntegrationRepository(prisma), new SecretBox(loadMasterKey(config, logger)));
  const files = new FileService(new FileRepository(prisma), new LocalFileStore(config.filesDir), { maxUploadBytes: config.uploadLimitBytes }, logger);
  const providers = new ProviderRegistry(config);
  const fineTuningJobs = new FineTuningRepository(prisma);
  const fineTuning = new FineTuningService(fineTuningJobs, files, integrations, providers);
  return { db, workspaces, apiKeys, organisations, labels, partials, integrations, files, providers, fineTuningJobs, fineTuning };
}

export type Services = ReturnType<typeof createServices>;
