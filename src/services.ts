import type { Config } from './config';
import type { Database } from './db/database';
import type { Logger } from './logger';
import { loadMasterKey, SecretBox, type Sealer } from './crypto/secret-box';
import { lazy } from './lazy';
import { ApiKeyCache } from './modules/api-keys/api-key.cache';
import { cachedResolve, HostedCache } from './modules/chat/hosted.cache';
import { Metrics } from './http/observability';
import { ApiKeyRepository } from './modules/api-keys/api-key.repository';
import { ApiKeyService } from './modules/api-keys/api-key.service';
import { BatchLines } from './modules/batches/batch-lines.repository';
import { BatchRepository } from './modules/batches/batch.repository';
import { BatchService } from './modules/batches/batch.service';
import { ProviderBatchRecords } from './modules/batches/provider-batch.repository';
import { createBatchFileCheck } from './modules/batches/batch-file';
import { ChatService } from './modules/chat/chat.service';
import { ClientBatchService } from './modules/client-mode/client-batches';
import { ClientModeService } from './modules/client-mode/client-mode.service';
import { FileRepository } from './modules/files/file.repository';
import { FileService } from './modules/files/file.service';
import { FineTuningRepository } from './modules/fine-tuning/fine-tuning.repository';
import { FineTuningService } from './modules/fine-tuning/fine-tuning.service';
import { JobCancellation } from './modules/fine-tuning/job-cancellation';
import { JobLeases } from './modules/fine-tuning/job-leases';
import { IdempotencyRepository } from './modules/idempotency/idempotency.repository';
import { IdempotencyService } from './modules/idempotency/idempotency.service';
import { IntegrationRepository } from './modules/integrations/integration.repository';
import { IntegrationService } from './modules/integrations/integration.service';
import { LabelRepository } from './modules/labels/label.repository';
import { LabelService } from './modules/labels/label.service';
import { ModelRepository } from './modules/models/model.repository';
import { ModelService } from './modules/models/model.service';
import { IntegrationModels } from './modules/models/integration-models';
import { OrganisationRepository } from './modules/organisations/organisation.repository';
import { OrganisationService } from './modules/organisations/organisation.service';
import { PartialRepository } from './modules/partials/partial.repository';
import { PartialService } from './modules/partials/partial.service';
import { UsageLedger } from './modules/usage/usage.ledger';
import { UsageRecorder } from './modules/usage/usage.recorder';
import { UsageRepository } from './modules/usage/usage.repository';
import { UsageService } from './modules/usage/usage.service';
import { loadPrices } from './modules/usage/prices';
import { WorkspaceRepository } from './modules/workspaces/workspace.repository';
import { WorkspaceService } from './modules/workspaces/workspace.service';
import { ProviderRegistry } from './providers/registry';
import { createFileStore } from './storage/create-file-store';
import { providerTracer } from './telemetry/tracing';

/** The domain services, built once per process and shared by both faces. */
export function createServices(db: Database, config: Config, logger: Logger) {
  const { prisma } = db;
  const workspaces = new WorkspaceService(new WorkspaceRepository(prisma));
  // Serves only once the process hears of key changes (startKeyInvalidation, src/main.ts).
  const apiKeys = new ApiKeyService(new ApiKeyRepository(prisma), workspaces, new ApiKeyCache(config.keyCache, false));
  const organisations = new OrganisationService(new OrganisationRepository(prisma), workspaces, apiKeys);
  const labels = new LabelService(new LabelRepository(prisma));
  workspaces.onWorkspaceCreated(labels.createDefaults);
  // Serves, like the key cache, only once the process hears of changes (src/main.ts).
  const hostedCache = new HostedCache(config.hostedCache, false);
  const partials = new PartialService(new PartialRepository(prisma), hostedCache);
  workspaces.onWorkspaceCreated(partials.createDefaultCollection);
  const metrics = new Metrics();
  const providers = new ProviderRegistry(
    config.providerEndpoints,
    { timeoutMs: config.providerTimeoutMs },
    (...call) => metrics.providerCall(...call),
    providerTracer(),
  );
  // Read (or generated into DATA_DIR) on first use: the gateway asks at start (main.ts), the admin CLI never
  // does, so it writes no master key it has no use for.
  const masterKey = lazy(() => new SecretBox(loadMasterKey(config, logger)));
  const secrets: Sealer = { seal: (...args) => masterKey().seal(...args), open: (...args) => masterKey().open(...args) };
  const integrations = new IntegrationService(new IntegrationRepository(prisma), secrets, providers, hostedCache);
  const idempotency = new IdempotencyService(new IdempotencyRepository(prisma), secrets, logger);
  const files = new FileService(
    new FileRepository(prisma),
    createFileStore(config),
    { maxUploadBytes: config.uploadLimitBytes, multipart: config.multipart },
    logger,
  );
  const fineTuningJobs = new FineTuningRepository(prisma);
  const jobLeases = new JobLeases(prisma);
  metrics.countJobs(() => jobLeases.countByStatus());
  const jobCancellation = new JobCancellation(fineTuningJobs, jobLeases, logger);
  const fineTuning = new FineTuningService(fineTuningJobs, files, integrations, providers, jobCancellation);
  files.guardDeletion((tx, scope, fileId) => fineTuning.fileInUse(tx, scope, fileId));
  // Client mode's `@slug` integrations come from hosted chat's cache (a gateway-run batch names one per line).
  const clientMode = new ClientModeService(cachedResolve(integrations, hostedCache), providers);
  const clientBatches = new ClientBatchService(clientMode);
  const models = new ModelService(new ModelRepository(prisma), new IntegrationModels(integrations, logger));
  const usageRecords = new UsageRepository(prisma, db.copyRows);
  const ledger = new UsageLedger(usageRecords, config.usage, logger);
  const usage = { ledger, recorder: new UsageRecorder(ledger), service: new UsageService(usageRecords, loadPrices(config.pricesFile)) };
  const chat = new ChatService(models, partials, integrations, clientMode, config.providerTimeoutMs, config.chatLimits, hostedCache);
  files.checkContent('batch', createBatchFileCheck);
  const batchRepository = new BatchRepository(prisma);
  const batchLines = new BatchLines(prisma);
  const batches = new BatchService(batchRepository, files, models, clientMode, integrations);
  const batchRecords = new ProviderBatchRecords(prisma);
  return {
    db,
    workspaces,
    apiKeys,
    organisations,
    hostedCache,
    labels,
    partials,
    integrations,
    files,
    providers,
    fineTuningJobs,
    jobLeases,
    jobCancellation,
    fineTuning,
    clientMode,
    clientBatches,
    models,
    chat,
    usage,
    batches,
    batchRepository,
    batchLines,
    batchRecords,
    idempotency,
    metrics,
    masterKey,
  };
}

export type Services = ReturnType<typeof createServices>;
