/**
 * openapi.yaml is a valid OpenAPI 3.1 document (against the OpenAPI Initiative's meta-schema, a test
 * fixture: test/fixtures/openapi/SOURCE.md), served as JSON at /v1/openapi.json without a key, and
 * describes every /v1 route the app has.
 */
import fs from 'node:fs';
import path from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { fullFormats } from 'ajv-formats/dist/formats';
import { createApp } from '../../src/app';
import { createLogger } from '../../src/logger';
import { api, useTestGateway } from '../support/gateway';
import { findOperation, openApiDocument, schemaValidator } from '../support/openapi';

const META_SCHEMA = path.join(__dirname, '..', 'fixtures', 'openapi', 'oas-3.1-schema.json');

const gw = useTestGateway();

/** Every route of an Express router, with the paths it is mounted under (method, full path). */
function expressRoutes(stack: any[], prefix = ''): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const layer of stack) {
    if (layer.route) {
      const paths: string[] = Array.isArray(layer.route.path) ? layer.route.path : [layer.route.path];
      for (const p of paths) for (const method of Object.keys(layer.route.methods)) out.push([method, (prefix + p).replace(/\/$/, '') || '/']);
    } else if (layer.handle?.stack) {
      const mount = typeof layer.rawPath === 'string' && layer.rawPath !== '/' ? layer.rawPath : '';
      out.push(...expressRoutes(layer.handle.stack, prefix + mount));
    }
  }
  return out;
}

describe('the OpenAPI document', () => {
  it('is valid OpenAPI 3.1', () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    // This revision of the meta-schema types every `$ref` as an absolute `uri`, though relative
    // references (`#/components/…`) are what documents use (later revisions say uri-reference).
    ajv.addFormat('uri', fullFormats['uri-reference']);
    ajv.addFormat('media-range', true);
    // Schema Objects are `{"$dynamicRef": "#meta"}`, i.e. the meta-schema's own `#/$defs/schema` (an
    // object or boolean) when no dialect overrides it; Ajv mis-resolves that dynamic reference here,
    // so it is spelled as the plain reference it stands for. The schemas themselves are compiled below.
    const metaSchema = fs.readFileSync(META_SCHEMA, 'utf8').replace(/\{\s*"\$dynamicRef": "#meta"\s*\}/g, '{"$ref": "#/$defs/schema"}');
    expect(metaSchema).not.toContain('$dynamicRef');
    const validate = ajv.compile(JSON.parse(metaSchema));
    expect(validate(openApiDocument) ? [] : validate.errors).toEqual([]);
    for (const [name, schema] of Object.entries(openApiDocument.components.schemas)) {
      expect([name, schemaValidator(`component ${name}`, schema)]).toEqual([name, expect.any(Function)]);
    }
    expect(openApiDocument.openapi).toBe('3.1.0');
    // Every internal reference points at something.
    const refs = [...JSON.stringify(openApiDocument).matchAll(/"\$ref":"#\/([^"]+)"/g)].map((m) => m[1]);
    for (const ref of refs) expect([ref, ref.split('/').reduce((node: any, key) => node?.[key], openApiDocument)]).not.toEqual([ref, undefined]);
    const operationIds = Object.values(openApiDocument.paths).flatMap((item: any) =>
      Object.values(item)
        .map((op: any) => op.operationId)
        .filter(Boolean),
    );
    expect(new Set(operationIds).size).toBe(operationIds.length);
  });

  it('is served as JSON at /v1/openapi.json without a key', async () => {
    const res = await api(gw, 'GET', '/v1/openapi.json', { key: null });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body).toEqual(openApiDocument);
  });

  it('has an operation for every /v1 route of the app', async () => {
    // A second app over the same services, to read its routing table (the running one is not exposed).
    const built = await createApp(gw.config, gw.gateway.services, createLogger('silent'));
    const routes = expressRoutes((built.app as any).router.stack);
    const v1 = routes.filter(([, p]) => p.startsWith('/v1'));
    expect(v1.length).toBeGreaterThan(30);
    const missing = v1.filter(([method, p]) => !findOperation(method, p.replace(/:(\w+)/g, 'x-$1')));
    expect(missing).toEqual([]);
    await built.stop();
  });
});
