// First: OpenTelemetry (when configured) must be started before the modules it instruments are loaded.
import './telemetry/preload';
import 'reflect-metadata';
import { createApp } from './app';
import { loadConfig, type Config } from './config';
import { openDatabase, type DatabaseOptions } from './db/database';
import type { NotificationListener } from './db/notifications';
import { createLogger, type Logger } from './logger';
import { listenForKeyChanges } from './modules/api-keys/api-key.invalidation';
import { JobMonitor } from './modules/fine-tuning/job-monitor';
import { createServices, type Services } from './services';
import { warnIfShared } from './storage/private-dir';
import { stopTelemetry } from './telemetry/tracing';

export interface RunningGateway {
  url: string;
  services: Services;
  /** The background job monitor (hosted fine-tuning jobs), running once the app listens. */
  monitor: JobMonitor;
  stop(): Promise<void>;
}

/** Hooks for tests and tools: statement counting, an in-memory PGlite started from a dump. */
export type GatewayOptions = Pick<DatabaseOptions, 'onQuery' | 'pgliteLoadDataDir'>;

/** Start: config → database → migrations → first-run bootstrap → app → listen. */
export async function startGateway(config: Config, logger: Logger, options: GatewayOptions = {}): Promise<RunningGateway> {
  warnIfShared(config.dataDir, logger);
  const timeouts = { connectMs: config.database.connectTimeoutMs, queryMs: config.database.queryTimeoutMs };
  const db = await openDatabase({ databaseUrl: config.databaseUrl, pgliteDir: config.pgliteDir, timeouts, ...options });
  let keyChanges: NotificationListener | undefined;
  try {
    const { applied, engineRan } = await db.migrate();
    logger.info({ database: db.kind, applied, schemaEngine: engineRan }, applied.length ? 'migrations applied' : 'database schema is current');
    const services = createServices(db, config, logger);
    // A missing, unreadable or invalid master key stops the start, not the first integration.
    services.masterKey();
    keyChanges = await listenForKeyChanges(db, services.apiKeys.cache, logger);
    await bootstrap(services, config, logger);
    const gateway = await createApp(config, services, logger);
    await new Promise<void>((resolve, reject) => {
      gateway.httpServer.once('error', reject);
      gateway.httpServer.listen(config.port, config.host, resolve);
    });
    const address = gateway.httpServer.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    const url = `http://127.0.0.1:${port}`;
    logger.info({ port, database: db.kind }, `gateway listening on ${url}`);
    const monitor = new JobMonitor(
      {
        jobs: services.fineTuningJobs,
        leases: services.jobLeases,
        service: services.fineTuning,
        files: services.files,
        cancellation: services.jobCancellation,
        providers: services.providers,
      },
      logger,
      { pollMs: config.jobPollMs, leaseMs: config.jobLeaseMs, submitDeadlineMs: config.jobSubmitDeadlineMs },
    );
    monitor.start();
    services.usage.ledger.start();
    return {
      url,
      services,
      monitor,
      async stop() {
        // Both within the grace period, while the database is open: requests in flight finish (new ones are
        // refused), and job steps in flight finish and release their leases, or have their jobs handed back.
        await Promise.all([monitor.stop(config.shutdownGraceMs), gateway.stop()]);
        // The calls answered meanwhile are in the ledger's buffer: written before the database closes.
        await services.usage.ledger.stop();
        await stopTelemetry();
        await keyChanges?.close();
        await db.close();
      },
    };
  } catch (err) {
    await keyChanges?.close().catch(() => {});
    await db.close().catch(() => {});
    throw err;
  }
}

async function bootstrap(services: Services, config: Config, logger: Logger): Promise<void> {
  const created = await services.organisations.bootstrap(config.bootstrapApiKey);
  if (!created) return;
  const ids = { organisation_id: created.organisation.id, workspace_id: created.workspace.id };
  if (config.bootstrapApiKey) {
    logger.info(ids, 'first start: created the default organisation and workspace with GATEWAY_BOOTSTRAP_API_KEY as its key');
  } else {
    // Printed once, to the console only (not the JSON log): it is the only copy of the secret.
    logger.info(ids, 'first start: created the default organisation, workspace and an organisation API key');
    process.stdout.write(`\nYour organisation API key (shown once, store it now):\n\n  ${created.key}\n\n`);
  }
}

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  const gateway = await startGateway(config, logger);
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), config.shutdownGraceMs + 5000);
    force.unref();
    gateway.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'error during shutdown');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

/** `node dist/src/main.js`, or `npm start` (scripts/start.js) once the build is current. */
export function runFromCommandLine(): void {
  main().catch((err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}

if (require.main === module) runFromCommandLine();
