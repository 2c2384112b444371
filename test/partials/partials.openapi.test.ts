import type { ValidateFunction } from 'ajv';
import { openApiDocument, responseSchema, schemaValidator } from '../support/openapi';
import { api, useTestGateway } from '../support/gateway';

/**
 * REST responses of the partials routes against the repository's openapi.yaml, more strictly than
 * the check every answer gets: the component schemas PromptPartial, PromptPartialSummary,
 * PromptPartialVersion, ErrorResponse and each operation's documented 200 body, with exactly the
 * properties they name.
 */
const component = (name: string) => ({
  validate: schemaValidator(`component ${name}`, { $ref: `#/components/schemas/${name}` }),
  schema: openApiDocument.components.schemas[name],
});

function okBody(route: string, method: string): { validate: ValidateFunction; schema: any } {
  const schema: any = responseSchema(method, `/v1${route}`, '200');
  return { validate: schemaValidator(`${method} ${route} 200`, schema), schema };
}

/** Valid against the schema, and with exactly the properties the schema names (nothing missing, nothing extra). */
function expectConforms(body: unknown, { validate, schema }: { validate: ValidateFunction; schema: any }) {
  const valid = validate(body);
  expect(validate.errors ?? []).toEqual([]);
  expect(valid).toBe(true);
  if (schema?.type === 'object' && schema.properties) {
    expect(Object.keys(body as object).sort()).toEqual(Object.keys(schema.properties).sort());
  }
}

const gw = useTestGateway();

describe('prompt partials REST responses against openapi.yaml', () => {
  it('has the schemas it validates against', () => {
    for (const name of ['PromptPartial', 'PromptPartialSummary', 'PromptPartialVersion', 'ErrorResponse']) expect(component(name).validate).toBeDefined();
  });

  it('every operation answers in the documented shape', async () => {
    const created = await api(gw, 'POST', '/v1/prompts/partials', { body: { name: 'Spec check', string: 'Hello', version_description: 'first' } });
    expect(created.status).toBe(200);
    expectConforms(created.body, okBody('/prompts/partials', 'post'));
    const id = created.body.id;

    const updated = await api(gw, 'PUT', `/v1/prompts/partials/${id}`, { body: { string: 'Hello again', description: 'second' } });
    expect(updated.status).toBe(200);
    expectConforms(updated.body, okBody('/prompts/partials/{idOrSlug}', 'put'));

    const made = await api(gw, 'PUT', `/v1/prompts/partials/${id}/makeDefault`, { body: { version: 2 } });
    expect(made.status).toBe(200);
    expectConforms(made.body, okBody('/prompts/partials/{idOrSlug}/makeDefault', 'put'));

    for (const ref of [id, created.body.slug]) {
      const got = await api(gw, 'GET', `/v1/prompts/partials/${ref}`);
      expect(got.status).toBe(200);
      expectConforms(got.body, component('PromptPartial'));
      expect(got.body.version).toBe(2);
    }

    const list = await api(gw, 'GET', '/v1/prompts/partials');
    expect(list.status).toBe(200);
    expectConforms(list.body, okBody('/prompts/partials', 'get'));
    expect(list.body.length).toBeGreaterThan(0);
    for (const summary of list.body) expectConforms(summary, component('PromptPartialSummary'));

    await api(gw, 'POST', '/v1/prompts/partials', { body: { name: 'Spec archived', string: 'x' } });
    await api(gw, 'PUT', '/v1/prompts/partials/spec-archived', { body: { status: 'archived' } });
    const archived = await api(gw, 'GET', '/v1/prompts/partials?status=archived');
    expect(archived.body).toHaveLength(1);
    for (const summary of archived.body) expectConforms(summary, component('PromptPartialSummary'));

    const versions = await api(gw, 'GET', `/v1/prompts/partials/${id}/versions`);
    expect(versions.status).toBe(200);
    expectConforms(versions.body, okBody('/prompts/partials/{idOrSlug}/versions', 'get'));
    expect(versions.body).toHaveLength(2);
    for (const version of versions.body) expectConforms(version, component('PromptPartialVersion'));

    const deleted = await api(gw, 'DELETE', `/v1/prompts/partials/${id}`);
    expect(deleted.status).toBe(200);
    expectConforms(deleted.body, okBody('/prompts/partials/{idOrSlug}', 'delete'));
  });

  it('errors use the documented error body', async () => {
    const missing = await api(gw, 'GET', '/v1/prompts/partials/no-such-partial');
    expect(missing.status).toBe(404);
    expectConforms(missing.body, component('ErrorResponse'));
    const invalid = await api(gw, 'POST', '/v1/prompts/partials', { body: { name: 'x' } });
    expect(invalid.status).toBe(400);
    expectConforms(invalid.body, component('ErrorResponse'));
  });
});
