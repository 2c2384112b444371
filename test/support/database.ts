import { randomBytes } from 'node:crypto';
import { Client } from 'pg';

/**
 * A fresh database for one test file: a new Postgres database when TEST_DATABASE_URL is set
 * (dropped afterwards), otherwise an in-memory PGlite.
 */
export interface TestDatabase {
  kind: 'postgres' | 'pglite';
  databaseUrl: string | undefined;
  pgliteDir: string;
  drop(): Promise<void>;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (!serverUrl) return { kind: 'pglite', databaseUrl: undefined, pgliteDir: 'memory://', drop: async () => {} };
  const name = `gw_test_${randomBytes(6).toString('hex')}`;
  await adminQuery(serverUrl, `CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    kind: 'postgres',
    databaseUrl: url.toString(),
    pgliteDir: 'memory://',
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
