/**
 * The admin CLI as an operator runs it (a child process on the database the environment selects):
 * help, creating and listing organisations, workspaces and keys, and clear messages for bad input.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { projectRoot } from '../../src/db/migrations';
import { nodeArgs } from '../support/compiled';
import { createTestDatabase, type TestDatabase } from '../support/database';

const run = promisify(execFile);

let database: TestDatabase;
let tempDir: string;
let dataDir: string;
let env: Record<string, string>;

beforeAll(async () => {
  database = await createTestDatabase();
  tempDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-cli-'));
  // Not made yet: the CLI makes what it needs of it.
  dataDir = path.join(tempDir, 'data');
  // On PGlite the CLI opens its own embedded database under DATA_DIR (a process cannot share the test's in-memory one).
  env = database.databaseUrl ? { DATABASE_URL: database.databaseUrl, DATA_DIR: dataDir } : { DATA_DIR: dataDir };
});
afterAll(async () => {
  await database.drop();
  fs.rmSync(tempDir, { recursive: true, force: true });
});

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, nodeArgs('src/admin/cli.ts', ...args), {
      cwd: projectRoot(),
      env: { ...process.env, NODE_OPTIONS: '', ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const failed = err as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

const lastJson = (stdout: string) => JSON.parse(stdout.trim().split('\n').at(-1)!);

describe('admin CLI', () => {
  it('prints its usage with --help, without touching a database', async () => {
    for (const args of [['--help'], ['-h'], ['list-keys', '--help']]) {
      const res = await cli(...args);
      expect(res.code).toBe(0);
      expect(res.stdout).toMatch(/^usage: npm run admin -- <command>/);
      for (const command of ['create-organisation', 'create-key', 'list-organisations', 'list-workspaces', 'list-keys']) expect(res.stdout).toContain(command);
    }
    const unknown = await cli('frobnicate');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^unknown command 'frobnicate'\n\nusage:/);
  });

  it('creates and lists organisations, workspaces and keys, never printing a stored secret', async () => {
    const created = lastJson((await cli('create-organisation', 'CLI', 'org')).stdout);
    expect(created).toEqual({ organisation_id: expect.any(String), workspace_id: expect.any(String), key: expect.stringMatching(/^gw_/) });
    const issued = lastJson((await cli('create-key', '--organisation', created.organisation_id, '--workspace', 'default', '--name', 'ci')).stdout);
    expect(issued.workspace_id).toBe(created.workspace_id);

    const organisations = lastJson((await cli('list-organisations')).stdout);
    expect(organisations.object).toBe('list');
    expect(organisations.data).toEqual(
      expect.arrayContaining([{ id: created.organisation_id, object: 'organisation', name: 'CLI org', created_at: expect.any(Number) }]),
    );

    const workspaces = lastJson((await cli('list-workspaces', '--organisation', created.organisation_id)).stdout);
    expect(workspaces.data).toEqual([expect.objectContaining({ id: created.workspace_id, object: 'workspace', slug: 'default' })]);

    const keys = await cli('list-keys', '--organisation', created.organisation_id);
    expect(lastJson(keys.stdout).data.map((k: any) => [k.name, k.workspace_id])).toEqual([
      ['Organisation key', null],
      ['ci', created.workspace_id],
    ]);
    expect(keys.stdout).not.toContain(created.key);
    expect(keys.stdout).not.toContain(issued.key);
  });

  it('writes no master key (it stores no credentials), and keeps the embedded database private', () => {
    expect(fs.existsSync(path.join(dataDir, 'master.key'))).toBe(false);
    const mode = (dir: string) => fs.statSync(dir).mode & 0o777;
    if (database.databaseUrl) {
      expect(fs.existsSync(dataDir)).toBe(false);
    } else {
      expect(mode(dataDir)).toBe(0o700);
      expect(mode(path.join(dataDir, 'pglite'))).toBe(0o700);
    }
  });

  it('answers a malformed or unknown id with a clear message, not a database error', async () => {
    const malformed = await cli('list-keys', '--organisation', 'not-an-id');
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toMatch(/^--organisation must be an organisation id \(a UUID/);
    expect(malformed.stderr).not.toMatch(/prisma|invalid input syntax/i);
    const unknown = await cli('create-key', '--organisation', '00000000-0000-4000-8000-000000000000');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr.trim()).toBe('Organisation 00000000-0000-4000-8000-000000000000 not found (list-organisations shows them)');
    const missing = await cli('list-workspaces');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^list-workspaces needs --organisation <id>/);
    const badOption = await cli('list-organisations', '--colour');
    expect(badOption.code).toBe(2);
    expect(badOption.stderr).toMatch(/usage:/);
  });
});
