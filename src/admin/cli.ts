/**
 * Operator commands, on whichever database the environment selects (DATABASE_URL / DATA_DIR):
 *   npm run admin -- create-organisation <name>
 *   npm run admin -- create-key --organisation <id> [--workspace <id|slug>] [--name <name>]
 * Each prints, as its last line, one JSON object {"organisation_id", "workspace_id", "key"}.
 */
import { parseArgs } from 'node:util';
import { loadConfig } from '../config';
import { DatabaseInUseError, openDatabase } from '../db/database';
import { createLogger } from '../logger';
import { createServices, type Services } from '../services';

const USAGE = `usage:
  npm run admin -- create-organisation <name>
  npm run admin -- create-key --organisation <id> [--workspace <id|slug>] [--name <name>]`;

type Result = { organisation_id: string; workspace_id: string | null; key: string };

async function createOrganisation(services: Services, args: string[]): Promise<Result> {
  const name = args.join(' ').trim();
  if (!name) throw new UsageError('create-organisation needs a name');
  const created = await services.organisations.create(name);
  return { organisation_id: created.organisation.id, workspace_id: created.workspace.id, key: created.key };
}

async function createKey(services: Services, args: string[]): Promise<Result> {
  const { values } = parseArgs({
    args,
    options: { organisation: { type: 'string' }, workspace: { type: 'string' }, name: { type: 'string' } },
  });
  if (!values.organisation) throw new UsageError('create-key needs --organisation <id>');
  if (!(await services.organisations.exists(values.organisation))) throw new Error(`Organisation ${values.organisation} not found`);
  const issued = await services.apiKeys.create(values.organisation, {
    name: values.name ?? (values.workspace ? 'Workspace key' : 'Organisation key'),
    workspaceId: values.workspace,
  });
  return { organisation_id: values.organisation, workspace_id: issued.record.workspaceId, key: issued.key };
}

class UsageError extends Error {}

async function main(argv: string[]): Promise<void> {
  const [command, ...args] = argv;
  const run = command === 'create-organisation' ? createOrganisation : command === 'create-key' ? createKey : null;
  if (!run) throw new UsageError(command ? `unknown command '${command}'` : 'no command given');

  const config = loadConfig();
  const logger = createLogger('warn');
  const db = await openDatabase({ databaseUrl: config.databaseUrl, pgliteDir: config.pgliteDir });
  try {
    await db.migrate();
    const result = await run(createServices(db, config, logger), args);
    console.log(JSON.stringify(result));
  } finally {
    await db.close();
  }
}

main(process.argv.slice(2)).then(
  // The schema engine leaves a timer pending after migrating: exit explicitly.
  () => process.exit(0),
  (err: unknown) => {
    if (err instanceof UsageError) console.error(`${err.message}\n${USAGE}`);
    else if (err instanceof DatabaseInUseError) console.error(err.message);
    else console.error(err instanceof Error ? err.message : err);
    process.exit(err instanceof UsageError ? 2 : 1);
  },
);
