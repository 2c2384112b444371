import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import 'reflect-metadata';
import type { Scope } from '../../src/auth/scope';
import { loadConfig } from '../../src/config';
import { openDatabase } from '../../src/db/database';
import { createLogger } from '../../src/logger';
import { createServices, type Services } from '../../src/services';
import { createTestDatabase } from './database';

export interface TestServices {
  services: Services;
  /** The default workspace of a fresh organisation. */
  scope: Scope;
  /** Closes the database, then drops it and the temporary DATA_DIR. */
  close(): Promise<void>;
}

/**
 * The domain services over a fresh copy of the migrated database, without an HTTP server or a job
 * monitor: for tests of service behaviour that need no transport. `env` overrides configuration
 * (as startTestGateway's does); DATA_DIR (files, master key) is a temporary folder.
 */
export async function createTestServices(env: Record<string, string> = {}): Promise<TestServices> {
  const database = await createTestDatabase();
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-services-'));
  const removeAll = async () => {
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent', ...env });
    const db = await openDatabase({ databaseUrl: database.databaseUrl, pgliteDir: database.pgliteDir, pgliteLoadDataDir: database.pgliteLoadDataDir });
    try {
      // A copy of the migrated template: this only checks it (the engine runs only if there is no template).
      await db.migrate();
      const services = createServices(db, config, createLogger(config.logLevel));
      const { organisation, workspace } = await services.organisations.create('Test organisation');
      const close = async () => {
        await db.close();
        await removeAll();
      };
      return { services, scope: { organisationId: organisation.id, workspaceId: workspace.id }, close };
    } catch (err) {
      await db.close();
      throw err;
    }
  } catch (err) {
    await removeAll();
    throw err;
  }
}
