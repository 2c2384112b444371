/**
 * Operator commands, on whichever database the environment selects (DATABASE_URL / DATA_DIR); see
 * USAGE. Each prints, as its last line, one JSON object: {"organisation_id", "workspace_id", "key"}
 * for the create commands, {"object": "list", "data": [...]} for the list commands (never a secret).
 */
import { parseArgs } from 'node:util';
import { loadConfig } from '../config';
import { DatabaseInUseError, openDatabase } from '../db/database';
import { unixSeconds } from '../http/openai-shapes';
import { createLogger } from '../logger';
import { toApiKeyJson } from '../modules/api-keys/api-key.mapper';
import { toWorkspaceJson } from '../modules/workspaces/workspace.mapper';
import { createServices, type Services } from '../services';
import { isUuid } from '../validation/parse';

const USAGE = `usage: npm run admin -- <command> [options]

commands:
  create-organisation <name>             a new organisation with a default workspace and an organisation key
  create-key --organisation <id> [--workspace <id|slug>] [--name <name>]
                                         a new key (organisation key without --workspace)
  list-organisations                     every organisation
  list-workspaces --organisation <id>    the organisation's workspaces
  list-keys --organisation <id>          the organisation's keys (prefixes only, never secrets)
  --help                                 this text

The database is the one the gateway uses: DATABASE_URL, else the embedded one under DATA_DIR
(stop the gateway first: the embedded database takes one process at a time).`;

class UsageError extends Error {}

async function createOrganisation(services: Services, args: string[]) {
  const name = args.join(' ').trim();
  if (!name) throw new UsageError('create-organisation needs a name');
  const created = await services.organisations.create(name);
  return { organisation_id: created.organisation.id, workspace_id: created.workspace.id, key: created.key };
}

/** `--organisation <id>` of an existing organisation; a malformed or unknown id is a clear message. */
async function organisationOption(services: Services, command: string, args: string[], extra: Record<string, { type: 'string' }> = {}) {
  const { values } = parseArgs({ args, options: { organisation: { type: 'string' }, ...extra } }) as { values: Record<string, string | undefined> };
  const id = values.organisation;
  if (id === undefined) throw new UsageError(`${command} needs --organisation <id>`);
  if (!isUuid(id)) throw new UsageError(`--organisation must be an organisation id (a UUID such as 3f9a1c52-8d0e-4b7a-9c61-2a5e8f7d4b10), not '${id}'`);
  if (!(await services.organisations.exists(id))) throw new Error(`Organisation ${id} not found (list-organisations shows them)`);
  return { id, values };
}

async function createKey(services: Services, args: string[]) {
  const { id, values } = await organisationOption(services, 'create-key', args, { workspace: { type: 'string' }, name: { type: 'string' } });
  const workspace = values.workspace;
  const name = values.name ?? (workspace ? 'Workspace key' : 'Organisation key');
  const issued = await services.apiKeys.create(id, { name, workspaceId: workspace });
  return { organisation_id: id, workspace_id: issued.record.workspaceId, key: issued.key };
}

async function listOrganisations(services: Services, args: string[]) {
  if (args.length) throw new UsageError('list-organisations takes no arguments');
  const rows = await services.organisations.list();
  return { object: 'list', data: rows.map((o) => ({ id: o.id, object: 'organisation', name: o.name, created_at: unixSeconds(o.createdAt) })) };
}

async function listWorkspaces(services: Services, args: string[]) {
  const { id } = await organisationOption(services, 'list-workspaces', args);
  return { object: 'list', data: (await services.workspaces.list(id)).map(toWorkspaceJson) };
}

async function listKeys(services: Services, args: string[]) {
  const { id } = await organisationOption(services, 'list-keys', args);
  return { object: 'list', data: (await services.apiKeys.list(id)).map(toApiKeyJson) };
}

const COMMANDS: Record<string, (services: Services, args: string[]) => Promise<unknown>> = {
  'create-organisation': createOrganisation,
  'create-key': createKey,
  'list-organisations': listOrganisations,
  'list-workspaces': listWorkspaces,
  'list-keys': listKeys,
};

async function main(argv: string[]): Promise<void> {
  const [command, ...args] = argv;
  if (command === undefined || ['--help', '-h', 'help'].includes(command) || args.includes('--help')) {
    console.log(USAGE);
    return;
  }
  const run = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : null;
  if (!run) throw new UsageError(`unknown command '${command}'`);

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
    // parseArgs' own errors (an unknown or valueless option) are usage errors too.
    const usage = err instanceof UsageError || (err instanceof Error && 'code' in err && String(err.code).startsWith('ERR_PARSE_ARGS'));
    if (usage) console.error(`${err.message}\n\n${USAGE}`);
    else if (err instanceof DatabaseInUseError) console.error(err.message);
    else console.error(err instanceof Error ? err.message : err);
    process.exit(usage ? 2 : 1);
  },
);
