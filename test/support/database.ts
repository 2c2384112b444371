import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { databaseUrl, pgliteTemplate, postgresTemplate } from './template';

/**
 * A fresh database for one test file: a new Postgres database when TEST_DATABASE_URL is set
 * (dropped afterwards), otherwise an in-memory PGlite. Both start as a copy of the run's migrated
 * template (test/support/template.ts) unless `migrated: false` asks for an empty one.
 */
export interface TestDatabase {
  kind: 'postgres' | 'pglite';
  databaseUrl: string | undefined;
  pgliteDir: string;
  /** For PGlite: the dump the in-memory database starts from (pass it to startGateway / openDatabase). */
  pgliteLoadDataDir: string | undefined;
  drop(): Promise<void>;
}

export async function createTestDatabase(options: { migrated?: boolean } = {}): Promise<TestDatabase> {
  const migrated = options.migrated ?? true;
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (!serverUrl) {
    const pgliteLoadDataDir = migrated ? await pgliteTemplate() : undefined;
    return { kind: 'pglite', databaseUrl: undefined, pgliteDir: 'memory://', pgliteLoadDataDir, drop: async () => {} };
  }
  const name = `gw_test_${randomBytes(6).toString('hex')}`;
  const template = migrated ? ` TEMPLATE ${await postgresTemplate(serverUrl)}` : '';
  await adminQuery(serverUrl, `CREATE DATABASE ${name}${template}`);
  return {
    kind: 'postgres',
    databaseUrl: databaseUrl(serverUrl, name),
    pgliteDir: 'memory://',
    pgliteLoadDataDir: undefined,
    drop: async () => {
      await adminQuery(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

export async function adminQuery(serverUrl: string, sql: string, params: unknown[] = []): Promise<Record<string, unknown>[]> {
  const client = new Client({ connectionString: serverUrl });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows;
  } finally {
    await client.end();
  }
}
