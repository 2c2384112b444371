/**
 * Checks REST answers against the repository's OpenAPI document (openapi.yaml): the operation is
 * found by method and path, the response by status (exact, `4XX`-style range, or `default`), and a
 * JSON body is validated against that response's schema. `api()` (test/support/gateway.ts) runs it on
 * every /v1 answer, so every REST test checks the document too. An answer the document does not
 * describe fails the test, so the document has to stay complete; the one exception is an error
 * answer on a path or method no operation has (a 404 for an unknown route, a 401 before routing):
 * it is checked against the error shape only. An answer in one of OpenAI's shapes is also checked against
 * OpenAI's own document (test/support/openai-schemas.ts), and so is every event of a stream
 * (`assertDocumentedEvent`).
 */
import fs from 'node:fs';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import YAML from 'yaml';
import { completeDocument, openApiPath } from '../../src/http/openapi';
import { assertOpenAIShape, ERROR_ANSWER, openAIComponentFor, openAIEventComponentFor } from './openai-schemas';

type Json = Record<string, any>;

/** The document as the gateway serves it (openapi.yaml completed from the providers' declarations). */
export const openApiDocument: Json = completeDocument(YAML.parse(fs.readFileSync(openApiPath(), 'utf8')));

const DOC_ID = 'openapi.json';
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head'] as const;

let ajv: Ajv2020 | undefined;
function validator(): Ajv2020 {
  if (!ajv) {
    ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema({ $id: DOC_ID, components: openApiDocument.components });
  }
  return ajv;
}

/** `#/components/…` refs of a schema taken out of the document, pointed back at it. */
const rooted = (schema: unknown) => JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', `"${DOC_ID}#/components/`));

/** A response object, following one `$ref` into components. */
function resolve(obj: Json): Json {
  if (typeof obj.$ref !== 'string') return obj;
  const pointer = obj.$ref.replace(/^#\//, '').split('/');
  return pointer.reduce((node: Json, key: string) => node[key.replaceAll('~1', '/').replaceAll('~0', '~')], openApiDocument);
}

interface Route {
  template: string;
  pattern: RegExp;
  params: number;
}

const routes: Route[] = Object.keys(openApiDocument.paths)
  .map((template) => ({
    template,
    pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '[^/]+')}$`),
    params: (template.match(/\{/g) ?? []).length,
  }))
  // Literal segments win over parameters.
  .sort((a, b) => a.params - b.params);

/** The operation a request reaches, or null when the document has none. */
export function findOperation(method: string, path: string): { template: string; operation: Json } | null {
  const bare = path.split('?')[0];
  for (const route of routes) {
    if (!route.pattern.test(bare)) continue;
    const operation = openApiDocument.paths[route.template][method.toLowerCase()];
    if (operation && METHODS.includes(method.toLowerCase() as (typeof METHODS)[number])) return { template: route.template, operation };
  }
  return null;
}

/** The JSON schema of one documented answer, e.g. `('get', '/v1/labels', '200')`. */
export function responseSchema(method: string, template: string, status: string): unknown {
  return resolve(openApiDocument.paths[template][method].responses[status]).content['application/json'].schema;
}

/** A validator of a schema of the document (its `#/components/…` refs resolved), compiled once per key. */
export function schemaValidator(key: string, schema: unknown): ValidateFunction {
  return compile(key, schema);
}

const compiled = new Map<string, ValidateFunction>();
function compile(key: string, schema: unknown): ValidateFunction {
  let fn = compiled.get(key);
  if (!fn) {
    fn = validator().compile(rooted(schema));
    compiled.set(key, fn);
  }
  return fn;
}

function check(key: string, schema: unknown, body: unknown, where: string): void {
  const validate = compile(key, schema);
  if (!validate(body)) {
    throw new Error(
      `${where}: the answer does not match openapi.yaml:\n${JSON.stringify(validate.errors, null, 2)}\nbody: ${JSON.stringify(body)?.slice(0, 2000)}`,
    );
  }
}

/**
 * Throws when an answer to `method path` is not what openapi.yaml documents. `contentType` is the
 * answer's Content-Type; only JSON bodies are validated against a schema.
 */
export function assertDocumentedAnswer(method: string, path: string, status: number, contentType: string | null, body: unknown): void {
  const where = `${method} ${path.split('?')[0]} → ${status}`;
  const mediaType = (contentType ?? '').split(';')[0].trim().toLowerCase();
  const found = findOperation(method, path);
  if (!found) {
    if (status >= 400 && status < 500 && mediaType === 'application/json') {
      check('error-response', { $ref: '#/components/schemas/ErrorResponse' }, body, `${where} (no such operation)`);
      return assertOpenAIShape(ERROR_ANSWER, body, `${where} (no such operation)`);
    }
    throw new Error(`${where}: openapi.yaml has no operation for ${method.toUpperCase()} ${path.split('?')[0]}`);
  }
  const responses: Json = found.operation.responses;
  const statusKey = [String(status), `${String(status)[0]}XX`, 'default'].find((k) => responses[k] !== undefined);
  if (!statusKey) throw new Error(`${where}: openapi.yaml documents no ${status} answer for ${method.toUpperCase()} ${found.template}`);
  const response = resolve(responses[statusKey]);
  const content: Json | undefined = response.content;
  if (!content) {
    if (body !== undefined && body !== '') throw new Error(`${where}: openapi.yaml documents no body for this answer`);
    return;
  }
  if (!mediaType || content[mediaType] === undefined) {
    throw new Error(`${where}: openapi.yaml documents ${Object.keys(content).join(', ')}, not '${mediaType}'`);
  }
  if (mediaType !== 'application/json') return;
  check(`${method.toLowerCase()} ${found.template} ${statusKey}`, content[mediaType].schema ?? {}, body, where);
  const component = openAIComponentFor(found.operation.operationId, status);
  if (component) assertOpenAIShape(component, body, where);
}

/** The operations whose accepted requests are checked (`assertDocumentedRequest`); more can join as their documents are checked. */
const CHECKED_REQUESTS = /^\/v1\/(files|fine_tuning)(\/|$)/;

/**
 * Throws when a request the gateway accepted (a 2xx answer) is not one openapi.yaml describes: a body
 * the document would refuse, or a body where it documents none. A gateway that takes more than its
 * document says, or a document stricter than the gateway, fails here. `body` is the parsed JSON, or
 * the fields of a multipart form (a file part as its filename).
 */
export function assertDocumentedRequest(method: string, path: string, mediaType: string, body: unknown): void {
  const bare = path.split('?')[0];
  if (!CHECKED_REQUESTS.test(bare)) return;
  const where = `${method} ${bare} (request)`;
  const found = findOperation(method, path);
  if (!found) throw new Error(`${where}: openapi.yaml has no operation for it`);
  const requestBody: Json | undefined = found.operation.requestBody && resolve(found.operation.requestBody);
  if (!requestBody) {
    if (body !== undefined) throw new Error(`${where}: openapi.yaml documents no request body`);
    return;
  }
  const content: Json | undefined = requestBody.content?.[mediaType];
  if (!content) throw new Error(`${where}: openapi.yaml documents ${Object.keys(requestBody.content ?? {}).join(', ')}, not '${mediaType}'`);
  const validate = compile(`${method.toLowerCase()} ${found.template} request ${mediaType}`, content.schema ?? {});
  if (!validate(body)) {
    throw new Error(
      `${where}: the request does not match openapi.yaml:\n${JSON.stringify(validate.errors, null, 2)}\nbody: ${JSON.stringify(body)?.slice(0, 2000)}`,
    );
  }
}

/**
 * Throws when one `data:` payload of a server-sent event stream answering `method path` is not what
 * both documents describe: a chunk (openapi.yaml's `x-data-schema` of the stream, OpenAI's
 * chat.completion.chunk), `[DONE]`, or the error event that ends a failed stream.
 */
export function assertDocumentedEvent(method: string, path: string, data: string): void {
  const where = `${method} ${path.split('?')[0]} → event`;
  if (data === '[DONE]') return;
  let event: unknown;
  try {
    event = JSON.parse(data);
  } catch {
    throw new Error(`${where}: not JSON: ${data.slice(0, 200)}`);
  }
  const found = findOperation(method, path);
  const stream: Json | undefined = found && resolve(found.operation.responses['200'] ?? {}).content?.['text/event-stream'];
  if (!found || !stream?.['x-data-schema']) throw new Error(`${where}: openapi.yaml documents no event stream for this operation`);
  if (typeof event === 'object' && event !== null && 'error' in event) check('error-response', { $ref: '#/components/schemas/ErrorResponse' }, event, where);
  else check(`${method.toLowerCase()} ${found.template} event`, stream['x-data-schema'], event, where);
  const component = openAIEventComponentFor(found.operation.operationId, event);
  if (component) assertOpenAIShape(component, event, where);
}
