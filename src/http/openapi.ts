import fs from 'node:fs';
import path from 'node:path';
import type { RequestHandler } from 'express';
import { zodToJsonSchema } from 'zod-to-json-schema';

type ZodSchema = Parameters<typeof zodToJsonSchema>[0];
import { projectRoot } from '../db/migrations';
import { PROVIDERS } from '../providers/registry';
import { restPath } from './case';

/** The REST contract: `openapi.yaml` at the repository root (written by hand, checked by the tests). */
export const openApiPath = () => path.join(projectRoot(), 'openapi.yaml');

type Json = Record<string, unknown>;

/** As far as this module reads the document. */
interface OpenApiDocument {
  components: { schemas: Record<string, Json> };
}

/** One provider's `provider_options`: `model` and the job options its module declares, nothing else. */
function providerOptionsOf(provider: (typeof PROVIDERS)[number]): Json {
  // zod-to-json-schema is typed against `zod/v3`, the same classes as `zod` under another path.
  const schema = provider.jobOptions as unknown as ZodSchema | undefined;
  const declared = schema ? (zodToJsonSchema(schema, { $refStrategy: 'none' }) as { properties?: Json }) : {};
  const options = Object.entries(declared.properties ?? {}).map(([key, value]): [string, unknown] => [restPath([key]), value]);
  return {
    title: provider.title,
    type: 'object',
    additionalProperties: false,
    properties: {
      model: { type: 'string', minLength: 1, maxLength: 256, description: "The provider's own id of the base model." },
      ...Object.fromEntries(options),
    },
  };
}

/**
 * openapi.yaml (parsed) completed from the providers' declarations: `ProviderOptions` lists each
 * provider's job options, so an option is documented where the provider declares it.
 */
export function completeDocument<T extends OpenApiDocument>(doc: T): T {
  const schemas = doc.components.schemas;
  schemas.ProviderOptions = { ...schemas.ProviderOptions, anyOf: [{ type: 'null' }, ...PROVIDERS.map(providerOptionsOf)] };
  return doc;
}

/**
 * `GET /v1/openapi.json`, without a key. The document is parsed once, on the first request rather
 * than at start-up: loading the YAML parser and parsing take ~0.2 s that a start need not wait for.
 */
export function openApiRoute(): RequestHandler {
  let body: string | undefined;
  return async (_req, res) => {
    if (body === undefined) {
      const { parse } = await import('yaml');
      const parsed: unknown = parse(await fs.promises.readFile(openApiPath(), 'utf8'));
      body = JSON.stringify(completeDocument(parsed as OpenApiDocument));
    }
    res.type('application/json').send(body);
  };
}
