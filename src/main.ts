// First: OpenTelemetry (when configured) must be started before the modules it instruments are loaded.
import './telemetry/preload';
import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import { createApp } from './app';
import { loadConfig, type Config } from './config';
import { openDatabase, type DatabaseOptions } from './db/database';
import { MissingDatabaseError, missingDatabase } from './db/missing-database';
import type { NotificationListener } from './db/notifications';
import { createLogger, type Logger } from './logger';
import { listenForKeyChanges } from './modules/api-keys/api-key.invalidation';
import { BatchRunner } from './modules/batches/batch-runner';
import { JobMonitor } from './modules/fine-tuning/job-monitor';
import { createServices, type Services } from './services';
import { warnIfShared } from './storage/private-dir';
import { jobStepTracer, stopTelemetry } from './telemetry/tracing';

export interface RunningGateway {
  url: string;
  services: Services;
  /** The background job monitor (hosted fine-tuning jobs), running once the app listens. */
  monitor: JobMonitor;
  /** The batch runner (batches run by the gateway), running once the app listens. */
  batchRunner: BatchRunner;
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
  let firstKey: string | null = null;
  try {
    const { applied, engineRan } = await db.migrate().catch((err: unknown) => {
      const missing = config.databaseUrl ? missingDatabase(err, config.databaseUrl) : null;
      if (!missing) throw err;
      logger.error({ database: missing.database }, missing.message);
      throw missing;
    });
    logger.info({ database: db.kind, applied, schemaEngine: engineRan }, applied.length ? 'migrations applied' : 'database schema is current');
    const services = createServices(db, config, logger);
    // A missing, unreadable or invalid master key stops the start, not the first integration.
    services.masterKey();
    keyChanges = await listenForKeyChanges(db, services.apiKeys.cache, services.hostedCache, logger);
    firstKey = await bootstrap(services, config, logger);
    const gateway = await createApp(config, services, logger);
    await new Promise<void>((resolve, reject) => {
      gateway.httpServer.once('error', reject);
      gateway.httpServer.listen(config.port, config.host, resolve);
    });
    const { bound, url } = addresses(gateway.httpServer.address(), config);
    logger.info({ host: config.host, port: new URL(url).port, database: db.kind }, `gateway listening on ${bound}; console at ${url}/console`);
    if (firstKey) showFirstKey(firstKey, `${url}/console`);
    const monitor = new JobMonitor(
      {
        jobs: services.fineTuningJobs,
        leases: services.jobLeases,
        service: services.fineTuning,
        files: services.files,
        cancellation: services.jobCancellation,
        providers: services.providers,
        tracer: jobStepTracer(),
      },
      logger,
      { pollMs: config.jobPollMs, leaseMs: config.jobLeaseMs, submitDeadlineMs: config.jobSubmitDeadlineMs },
    );
    monitor.start();
    const batchRunner = new BatchRunner(
      {
        batches: services.batchRepository,
        lines: services.batchLines,
        files: services.files,
        chat: services.chat,
        meter: (batch) => services.usage.recorder.chatMeter({ keyId: batch.apiKeyId, ...batch }, { batch: true }),
        meterResults: services.usage.ledger.enabled,
        records: services.batchRecords,
        target: (scope, batch) => services.batches.target(scope, batch),
      },
      logger,
      {
        pollMs: config.batch.pollMs,
        leaseMs: config.jobLeaseMs,
        concurrency: config.batch.concurrency,
        retryBaseMs: config.batch.retryBaseMs,
      },
    );
    // GATEWAY_BATCH_CONCURRENCY=0: a replica that serves the API but runs no batch.
    if (config.batch.concurrency > 0) {
      services.batches.onWork(() => batchRunner.wake());
      batchRunner.start();
    }
    services.usage.ledger.start();
    return {
      url,
      services,
      monitor,
      batchRunner,
      async stop() {
        // Both within the grace period, while the database is open: requests in flight finish (new ones are
        // refused), and job steps in flight finish and release their leases, or have their jobs handed back.
        await Promise.all([monitor.stop(config.shutdownGraceMs), batchRunner.stop(config.shutdownGraceMs), gateway.stop()]);
        // The calls answered meanwhile are in the ledger's buffer: written before the database closes.
        await services.usage.ledger.stop();
        await stopTelemetry();
        await keyChanges?.close();
        await db.close();
        logger.info('gateway stopped');
      },
    };
  } catch (err) {
    // The key exists now, whatever failed after it was made: it must not be lost.
    if (firstKey) showFirstKey(firstKey, null);
    await keyChanges?.close().catch(() => {});
    await db.close().catch(() => {});
    throw err;
  }
}

/** Creates the default organisation on a first start; returns the key to show when the gateway made one. */
async function bootstrap(services: Services, config: Config, logger: Logger): Promise<string | null> {
  const created = await services.organisations.bootstrap(config.bootstrapApiKey);
  if (!created) return null;
  const ids = { organisation_id: created.organisation.id, workspace_id: created.workspace.id };
  if (config.bootstrapApiKey) {
    logger.info(ids, 'first start: created the default organisation and workspace with GATEWAY_BOOTSTRAP_API_KEY as its key');
    return null;
  }
  logger.info(ids, 'first start: created the default organisation, workspace and an organisation API key');
  return created.key;
}

/** Printed once, to the console only (not the JSON log): it is the only copy of the secret. */
function showFirstKey(key: string, consoleUrl: string | null): void {
  const signIn = consoleUrl ? `Sign in with it at ${consoleUrl}\n\n` : '';
  process.stdout.write(`\nYour organisation API key (shown once, store it now):\n\n  ${key}\n\n${signIn}`);
}

/**
 * The address the server bound (`http://0.0.0.0:8787` with HOST=0.0.0.0: every interface) and a URL
 * that reaches it from this machine (127.0.0.1 for the wildcard addresses).
 */
function addresses(address: AddressInfo | string | null, config: Config): { bound: string; url: string } {
  if (typeof address !== 'object' || !address) return { bound: `http://${config.host}:${config.port}`, url: `http://127.0.0.1:${config.port}` };
  const host = (ip: string) => (ip.includes(':') ? `[${ip}]` : ip);
  const wildcard = address.address === '0.0.0.0' || address.address === '::';
  return { bound: `http://${host(address.address)}:${address.port}`, url: `http://${wildcard ? '127.0.0.1' : host(address.address)}:${address.port}` };
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
    // Already logged, in one line saying what to do.
    if (!(err instanceof MissingDatabaseError)) console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}

if (require.main === module) runFromCommandLine();
