/**
 * OpenAI's own API document as a second reference for every answer that claims OpenAI's shape: a
 * gateway operation answering an OpenAI object (a file, a job, a list of events, a chat completion, a
 * stream chunk, a model, an error) is also validated against OpenAI's component for it, vendored in
 * test/fixtures/openai (source, commit and licence in its README). Typed OpenAI clients (the Java, Go
 * and .NET SDKs) decode by that document, so the project's openapi.yaml describing the gateway is not
 * enough: a `null` where OpenAI promises a string breaks them.
 *
 * Validators are compiled on first use, once per worker process (OpenAI's job object alone reaches a
 * few hundred milliseconds of compiling). Ajv checks types exactly (no coercion: a null is not a
 * string, a float not an integer); its `strict` mode is off because it is about schema authoring
 * (OpenAI's `x-oaiMeta` and similar annotations), not about the data.
 */
import fs from 'node:fs';
import path from 'node:path';
import v8 from 'node:v8';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

type Json = Record<string, any>;

/** The gateway's operations (openapi.yaml operationId) that answer an OpenAI object, with OpenAI's component for it. */
export const OPENAI_ANSWERS: Readonly<Record<string, string>> = {
  listFiles: 'ListFilesResponse',
  uploadFile: 'OpenAIFile',
  getFile: 'OpenAIFile',
  deleteFile: 'DeleteFileResponse',
  listFineTuningJobs: 'ListPaginatedFineTuningJobsResponse',
  createFineTuningJob: 'FineTuningJob',
  getFineTuningJob: 'FineTuningJob',
  cancelFineTuningJob: 'FineTuningJob',
  listFineTuningJobEvents: 'ListFineTuningJobEventsResponse',
  listFineTuningJobCheckpoints: 'ListFineTuningJobCheckpointsResponse',
  createChatCompletion: 'CreateChatCompletionResponse',
  listModels: 'ListModelsResponse',
  getModel: 'Model',
  listBatches: 'ListBatchesResponse',
  createBatch: 'Batch',
  getBatch: 'Batch',
  cancelBatch: 'Batch',
  getCompletionsUsage: 'UsageResponse',
  getCosts: 'UsageResponse',
};

/** The operations that may answer a server-sent event stream, with OpenAI's component for each event. */
const OPENAI_EVENTS: Readonly<Record<string, string>> = {
  createChatCompletion: 'CreateChatCompletionStreamResponse',
};
/** Every error answer of every operation, and an error event ending a stream. */
export const ERROR_ANSWER = 'ErrorResponse';

/**
 * Where OpenAI's service answers differently from its own document, the gateway follows the service
 * (clients are written against it), and where the document leaves an answer impossible (an empty page
 * has no first id) it answers null. Each is listed in the README's deviations; nothing else is relaxed.
 */
const SERVICE_DEVIATIONS: ReadonlyArray<{ component: string; why: string; patch(schema: Json): void }> = [
  {
    component: 'OpenAIFile',
    why: 'OpenAI answers `status_details: null` on files (the document types it string).',
    patch: (schema) => (schema.properties.status_details = { anyOf: [schema.properties.status_details, { type: 'null' }] }),
  },
  {
    component: 'OpenAIFile',
    why: 'OpenAI takes uploads with purpose `evals` (its CreateFileRequest) and answers them with it, though the file object lists no `evals`.',
    patch: (schema) => (schema.properties.purpose.enum = [...schema.properties.purpose.enum, 'evals']),
  },
  ...['ListFilesResponse', 'ListBatchesResponse'].map((component) => ({
    component,
    why: 'An empty page has no first or last id: `first_id`/`last_id` are null there (strings on every other page).',
    patch: (schema: Json) => {
      for (const key of ['first_id', 'last_id']) schema.properties[key] = { anyOf: [schema.properties[key], { type: 'null' }] };
      schema.if = { properties: { data: { minItems: 1 } } };
      schema.then = { properties: { first_id: { type: 'string' }, last_id: { type: 'string' } } };
    },
  })),
];

export const openAIFixturePath = path.join(__dirname, '..', 'fixtures', 'openai', 'components.json');
const DOC_ID = 'openai.json';

/**
 * The document's OpenAPI 3.0 leftovers in JSON Schema 2020-12 terms (OpenAPI 3.1's dialect, which Ajv
 * speaks): `nullable: true` → "or null"; `exclusiveMinimum: true` beside `minimum` → the number itself.
 */
export function normalised(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(normalised);
  if (node === null || typeof node !== 'object') return node;
  const { nullable, ...rest } = node as Json;
  const out: Json = Object.fromEntries(Object.entries(rest).map(([key, value]) => [key, normalised(value)]));
  for (const [flag, bound] of [
    ['exclusiveMinimum', 'minimum'],
    ['exclusiveMaximum', 'maximum'],
  ] as const) {
    if (typeof out[flag] !== 'boolean') continue;
    if (out[flag] === true && typeof out[bound] === 'number') {
      out[flag] = out[bound];
      delete out[bound];
    } else delete out[flag];
  }
  return nullable === true ? { anyOf: [out, { type: 'null' }] } : out;
}

function openAI(): Ajv2020 {
  const fixture = JSON.parse(fs.readFileSync(openAIFixturePath, 'utf8')) as { components: { schemas: Json } };
  const schemas = normalised(fixture.components.schemas) as Json;
  for (const deviation of SERVICE_DEVIATIONS) deviation.patch(schemas[deviation.component]);
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addFormat('unixtime', { type: 'number', validate: (n: number) => Number.isInteger(n) && n >= 0 });
  ajv.addSchema({ $id: DOC_ID, components: { schemas } });
  return ajv;
}

/**
 * Jest evaluates a test file's modules afresh, so a module's own cache lasts one file; Node's built-in
 * modules are the same objects for every file a worker runs, so what hangs on one lasts the process.
 * Compiled validators are plain functions over plain data: they work from any file.
 */
const CACHE = Symbol.for('model-gateway.test.openai-validators');
type Cache = { ajv: Ajv2020; compiled: Map<string, ValidateFunction> };
function cache(): Cache {
  const holder = v8 as unknown as { [CACHE]?: Cache };
  holder[CACHE] ??= { ajv: openAI(), compiled: new Map() };
  return holder[CACHE];
}

function validator(component: string): ValidateFunction {
  const { ajv, compiled } = cache();
  let fn = compiled.get(component);
  if (!fn) {
    fn = ajv.compile({ $ref: `${DOC_ID}#/components/schemas/${component}` });
    compiled.set(component, fn);
  }
  return fn;
}

/** Throws when `body` is not a valid `component` of OpenAI's document. */
export function assertOpenAIShape(component: string, body: unknown, where: string): void {
  const validate = validator(component);
  if (!validate(body)) {
    throw new Error(
      `${where}: the answer is not OpenAI's ${component}:\n${JSON.stringify(validate.errors, null, 2)}\nbody: ${JSON.stringify(body)?.slice(0, 2000)}`,
    );
  }
}

/** OpenAI's component for an event (an error event included) of a stream answering `operationId`. */
export function openAIEventComponentFor(operationId: string | undefined, event: unknown): string | undefined {
  if (typeof event === 'object' && event !== null && 'error' in event) return ERROR_ANSWER;
  return operationId === undefined ? undefined : OPENAI_EVENTS[operationId];
}

/** OpenAI's component for a JSON answer of `operationId` with `status`; none for an operation that is the gateway's own. */
export function openAIComponentFor(operationId: string | undefined, status: number): string | undefined {
  if (status >= 400) return ERROR_ANSWER;
  return operationId === undefined ? undefined : OPENAI_ANSWERS[operationId];
}
