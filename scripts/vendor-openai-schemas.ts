/**
 * `npm run vendor:openai -- <openapi.yaml> <commit>`: copies the component schemas the test suite
 * validates answers against (test/support/openai-schemas.ts) out of OpenAI's published OpenAPI
 * document (github.com/openai/openai-openapi, MIT licence) into test/fixtures/openai/components.json,
 * with every component they reference, unchanged. The document is read from the path given (a
 * checkout of that repository); nothing reads it at build, test or run time.
 *
 *   git -C openai-openapi show HEAD:openapi.yaml > /tmp/openai.yaml
 *   npm run vendor:openai -- /tmp/openai.yaml "$(git -C openai-openapi rev-parse HEAD)"
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';

/** What the gateway answers in OpenAI's shapes, and what later work on chat requests and batches needs. */
export const VENDORED_COMPONENTS = [
  'OpenAIFile',
  'ListFilesResponse',
  'DeleteFileResponse',
  'FineTuningJob',
  'ListPaginatedFineTuningJobsResponse',
  'FineTuningJobEvent',
  'ListFineTuningJobEventsResponse',
  'FineTuningJobCheckpoint',
  'ListFineTuningJobCheckpointsResponse',
  'CreateChatCompletionRequest',
  'CreateChatCompletionResponse',
  'CreateChatCompletionStreamResponse',
  'Model',
  'ListModelsResponse',
  'ErrorResponse',
  'Batch',
  'ListBatchesResponse',
  'CreateBatchRequest',
  'UsageResponse',
] as const;

export const FIXTURE = path.join(__dirname, '..', 'test', 'fixtures', 'openai', 'components.json');

type Schemas = Record<string, unknown>;

/** The names of the components `schema` refers to (`#/components/schemas/<name>`), at any depth. */
function referenced(schema: unknown, into: Set<string>): void {
  if (Array.isArray(schema)) return schema.forEach((item) => referenced(item, into));
  if (schema === null || typeof schema !== 'object') return;
  for (const [key, value] of Object.entries(schema)) {
    if (key === '$ref' && typeof value === 'string') {
      const name = /^#\/components\/schemas\/(.+)$/.exec(value)?.[1];
      if (!name) throw new Error(`unexpected reference ${value}`);
      into.add(name);
    } else referenced(value, into);
  }
}

/** `roots` and every component they reach, in alphabetical order. */
export function closure(all: Schemas, roots: readonly string[]): Schemas {
  const names = new Set<string>();
  const pending = [...roots];
  for (let name = pending.pop(); name !== undefined; name = pending.pop()) {
    if (names.has(name)) continue;
    if (!(name in all)) throw new Error(`no component ${name} in the document`);
    names.add(name);
    const refs = new Set<string>();
    referenced(all[name], refs);
    pending.push(...refs);
  }
  return Object.fromEntries([...names].sort().map((name) => [name, all[name]]));
}

function main(): void {
  const [source, commit] = process.argv.slice(2);
  if (!source || !/^[0-9a-f]{40}$/.test(commit ?? '')) throw new Error('usage: vendor-openai-schemas <openapi.yaml> <40-hex commit>');
  const document = YAML.parse(readFileSync(source, 'utf8')) as { info: { version: string }; components: { schemas: Schemas } };
  const fixture = {
    source: 'https://github.com/openai/openai-openapi/blob/' + commit + '/openapi.yaml',
    commit,
    version: document.info.version,
    licence: 'MIT (Copyright (c) OpenAI), https://github.com/openai/openai-openapi/blob/' + commit + '/LICENSE',
    roots: VENDORED_COMPONENTS,
    components: { schemas: closure(document.components.schemas, VENDORED_COMPONENTS) },
  };
  writeFileSync(FIXTURE, JSON.stringify(fixture, null, 2) + '\n');
  console.log(`${Object.keys(fixture.components.schemas).length} components written to ${path.relative(process.cwd(), FIXTURE)}`);
}

if (require.main === module) main();
