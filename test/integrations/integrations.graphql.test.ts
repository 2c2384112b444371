import { api, createOrganisation, gql, useTestGateway } from '../support/gateway';

const gw = useTestGateway();

const SECRET = 'sk-gql-SECRET-0a9b8c7d6e5f4a3b';
const FIELDS = 'id slug provider name options organisationId workspaceId createdAt';
const CREATE = `mutation($input: CreateIntegrationInput!) { createIntegration(input: $input) { ${FIELDS} } }`;

describe('integrations over GraphQL', () => {
  it('creates, reads, lists and deletes through the same service as REST', async () => {
    const created = await gql(gw, CREATE, {
      input: { slug: 'gql-openai', provider: 'openai', name: 'From GraphQL', credentials: { apiKey: SECRET }, options: { organization: 'org-9' } },
    });
    expect(created.body.errors).toBeUndefined();
    const integration = created.body.data.createIntegration;
    expect(integration).toMatchObject({ slug: 'gql-openai', provider: 'openai', name: 'From GraphQL', options: { 'x-gateway-openai-organization': 'org-9' } });

    const rest = await api(gw, 'GET', '/v1/integrations/gql-openai');
    expect(rest.body).toMatchObject({ id: integration.id, slug: 'gql-openai', created_at: Math.floor(Date.parse(integration.createdAt) / 1000) });

    // camelCase credential keys are stored under their snake_case names.
    const scope = await gw.gateway.services.workspaces.resolveScope(await gw.gateway.services.apiKeys.authenticate(gw.key));
    expect((await gw.gateway.services.integrations.resolve(scope, '@gql-openai')).credentials).toEqual({ api_key: SECRET });

    const one = await gql(gw, `query($slug: String!) { integration(slug: $slug) { ${FIELDS} } }`, { slug: 'gql-openai' });
    expect(one.body.data.integration).toEqual(integration);
    const list = await gql(gw, `{ integrations { slug } }`);
    expect(list.body.data.integrations).toEqual([{ slug: 'gql-openai' }]);
    for (const res of [created, one, list]) expect(JSON.stringify(res.body)).not.toContain(SECRET);

    const deleted = await gql(gw, `mutation { deleteIntegration(slug: "gql-openai") }`);
    expect(deleted.body.data.deleteIntegration).toBe(true);
    const gone = await gql(gw, `{ integration(slug: "gql-openai") { id } }`);
    expect(gone.body.errors[0].extensions.code).toBe('NOT_FOUND');
    const again = await gql(gw, `mutation { deleteIntegration(slug: "gql-openai") }`);
    expect(again.body.errors[0].extensions.code).toBe('NOT_FOUND');
  });

  it('updates an integration (rotating credentials) by id or slug with updateIntegration', async () => {
    const created = await gql(gw, CREATE, {
      input: { slug: 'gql-rotate', provider: 'openai', credentials: { apiKey: SECRET }, options: { organization: 'org-1' } },
    });
    const { id } = created.body.data.createIntegration;
    const UPDATE = `mutation($ref: String!, $input: UpdateIntegrationInput!) { updateIntegration(ref: $ref, input: $input) { ${FIELDS} } }`;
    const rotated = await gql(gw, UPDATE, { ref: id, input: { credentials: { apiKey: 'sk-gql-rotated-99887766' } } });
    expect(rotated.body.errors).toBeUndefined();
    expect(rotated.body.data.updateIntegration).toEqual(created.body.data.createIntegration);
    const scope = await gw.gateway.services.workspaces.resolveScope(await gw.gateway.services.apiKeys.authenticate(gw.key));
    expect((await gw.gateway.services.integrations.resolve(scope, '@gql-rotate')).credentials).toEqual({ api_key: 'sk-gql-rotated-99887766' });

    const renamed = await gql(gw, UPDATE, { ref: 'gql-rotate', input: { name: 'Renamed' } });
    expect(renamed.body.data.updateIntegration).toMatchObject({ id, name: 'Renamed', options: { 'x-gateway-openai-organization': 'org-1' } });
    const byId = await gql(gw, `query($slug: String!) { integration(slug: $slug) { id name } }`, { slug: id });
    expect(byId.body.data.integration).toEqual({ id, name: 'Renamed' });

    const invalid = await gql(gw, UPDATE, { ref: id, input: { credentials: { apiKey: 'sk-x', secretThing: 'sk-never-echoed' } } });
    expect(invalid.body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    expect(JSON.stringify(invalid.body)).not.toContain('sk-never-echoed');
    const other = await createOrganisation(gw, 'GraphQL updater');
    const foreign = await gql(other, UPDATE, { ref: id, input: { name: 'stolen' } });
    expect(foreign.body.errors[0].extensions.code).toBe('NOT_FOUND');
  });

  it('maps domain errors to extension codes and never echoes a credential', async () => {
    const input = { slug: 'gql-dup', provider: 'openai', credentials: { api_key: SECRET } };
    expect((await gql(gw, CREATE, { input })).body.errors).toBeUndefined();
    const dup = await gql(gw, CREATE, { input });
    expect(dup.body.errors[0].extensions).toMatchObject({ code: 'CONFLICT', param: 'slug' });

    const failures = [
      await gql(gw, CREATE, { input: { ...input, slug: 'gql-x', credentials: {} } }),
      await gql(gw, CREATE, { input: { ...input, slug: 'gql-x', credentials: SECRET } }),
      await gql(gw, CREATE, { input: { ...input, slug: 'gql-x', credentials: { api_key: SECRET, token: SECRET } } }),
      await gql(gw, CREATE, { input: { ...input, slug: 'gql-x', provider: 'nope' } }),
      // Variable coercion errors: graphql-js would quote the whole input object.
      await gql(gw, CREATE, { input: { provider: 'openai', credentials: { api_key: SECRET } } }),
      await gql(gw, CREATE, { input: { ...input, slug: 'gql-x', unknownField: 1 } }),
      await gql(gw, CREATE, { input: { ...input, slug: 42 } }),
    ];
    for (const res of failures) {
      expect(res.body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
      expect(JSON.stringify(res.body)).not.toContain(SECRET.slice(3));
    }
    expect(failures[0].body.errors[0].extensions.param).toBe('credentials.api_key');
    expect(failures[3].body.errors[0].extensions.param).toBe('provider');
    expect(failures[4].body.errors[0].message).toMatch(/slug/);
    expect(failures[5].body.errors[0].message).toMatch(/unknownField/);
  });

  it("another organisation's integration is NOT_FOUND", async () => {
    await gql(gw, CREATE, { input: { slug: 'gql-private', provider: 'openai', credentials: { api_key: SECRET } } });
    const other = await createOrganisation(gw);
    const read = await gql(other, `{ integration(slug: "gql-private") { id } }`);
    expect(read.body.errors[0].extensions.code).toBe('NOT_FOUND');
    const del = await gql(other, `mutation { deleteIntegration(slug: "gql-private") }`);
    expect(del.body.errors[0].extensions.code).toBe('NOT_FOUND');
    expect((await gql(other, `{ integrations { id } }`)).body.data.integrations).toEqual([]);
  });
});
