import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { api, createOrganisation, useTestGateway } from '../support/gateway';
import { expectError } from '../support/expect';

const gw = useTestGateway();

const SECRET = 'sk-live-SECRET-4f1d8a2b9c7e6d5f';

/** Everything the database holds about integrations, as text. */
async function integrationTableText(): Promise<string> {
  const rows = await gw.gateway.services.db.prisma.$queryRawUnsafe<Record<string, unknown>[]>('SELECT * FROM integrations');
  return JSON.stringify(rows);
}

describe('integrations over REST', () => {
  it('creates, lists, reads and deletes an integration; credentials are never returned', async () => {
    const created = await api(gw, 'POST', '/v1/integrations', {
      body: { slug: 'my-openai', provider: 'openai', name: 'Team OpenAI', credentials: { api_key: SECRET }, options: { organization: 'org-123' } },
    });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      object: 'integration',
      slug: 'my-openai',
      provider: 'openai',
      name: 'Team OpenAI',
      options: { 'x-gateway-openai-organization': 'org-123' },
      organisation_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      workspace_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      created_at: expect.any(Number),
    });
    expect(Math.abs(created.body.created_at - Date.now() / 1000)).toBeLessThan(60);

    const one = await api(gw, 'GET', '/v1/integrations/my-openai');
    expect(one.body).toEqual(created.body);
    expect((await api(gw, 'GET', '/v1/integrations/@my-openai')).body).toEqual(created.body);
    const list = await api(gw, 'GET', '/v1/integrations');
    expect(list.body).toEqual({ object: 'list', data: [created.body] });
    for (const res of [created, one, list]) expect(JSON.stringify(res.body)).not.toContain(SECRET);

    const deleted = await api(gw, 'DELETE', '/v1/integrations/my-openai');
    expect(deleted.body).toEqual({ id: created.body.id, object: 'integration', deleted: true });
    expectError(await api(gw, 'GET', '/v1/integrations/my-openai'), 404, { type: 'not_found_error' });
    expectError(await api(gw, 'DELETE', '/v1/integrations/my-openai'), 404, { type: 'not_found_error' });
  });

  it('stores credentials encrypted, and resolve() gives them back for the fine-tuning module', async () => {
    const created = await api(gw, 'POST', '/v1/integrations', {
      body: { slug: 'enc-test', provider: 'openai', credentials: { api_key: SECRET }, options: { project: 'proj_1' } },
    });
    expect(created.status).toBe(200);
    expect(created.body.name).toBe('enc-test');

    const text = await integrationTableText();
    expect(text).toContain('enc-test');
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain(Buffer.from(SECRET).toString('base64'));
    expect(text).not.toContain(Buffer.from(SECRET).toString('hex'));
    const [row] = await gw.gateway.services.db.prisma.$queryRawUnsafe<{ encrypted_credentials: string }[]>(
      "SELECT encrypted_credentials FROM integrations WHERE slug = 'enc-test'",
    );
    expect(row.encrypted_credentials).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+\.[\w-]+$/);

    const scope = await gw.gateway.services.workspaces.resolveScope(await gw.gateway.services.apiKeys.authenticate(gw.key));
    const resolved = await gw.gateway.services.integrations.resolve(scope, '@enc-test');
    expect(resolved).toEqual({ provider: 'openai', credentials: { api_key: SECRET }, options: { 'x-gateway-openai-project': 'proj_1' }, slug: 'enc-test' });
    expect(await gw.gateway.services.integrations.resolve(scope, 'enc-test')).toEqual(resolved);
    await expect(gw.gateway.services.integrations.resolve(scope, '@missing')).rejects.toMatchObject({ kind: 'not_found' });
    for (const bad of ['@', '', '@Bad Slug', 'sk-proj abc']) {
      await expect(gw.gateway.services.integrations.resolve(scope, bad)).rejects.toMatchObject({ kind: 'invalid_request', code: 'invalid_integration_ref' });
    }

    // Each sealing uses a fresh IV: the same secret twice gives different ciphertexts.
    await api(gw, 'POST', '/v1/integrations', { body: { slug: 'enc-test-2', provider: 'openai', credentials: { api_key: SECRET } } });
    const rows = await gw.gateway.services.db.prisma.$queryRawUnsafe<{ encrypted_credentials: string }[]>(
      "SELECT encrypted_credentials FROM integrations WHERE slug IN ('enc-test', 'enc-test-2')",
    );
    expect(new Set(rows.map((r) => r.encrypted_credentials.split('.')[2])).size).toBe(2);
  });

  it('validates credentials per provider, never echoing a value', async () => {
    const post = (body: Record<string, unknown>) => api(gw, 'POST', '/v1/integrations', { body });
    const base = { slug: 'checked', provider: 'openai' };

    const missing = await post({ ...base, credentials: {} });
    expectError(missing, 400, { type: 'invalid_request_error', param: 'credentials.api_key' });
    expectError(await post({ ...base }), 400, { type: 'invalid_request_error', param: 'credentials.api_key' });
    expectError(await post({ ...base, credentials: SECRET }), 400, { type: 'invalid_request_error', param: 'credentials' });
    const unknown = await post({ ...base, credentials: { api_key: SECRET, password: SECRET } });
    expectError(unknown, 400, { type: 'invalid_request_error', param: 'credentials.password' });
    const notString = await post({ ...base, credentials: { api_key: 12345 } });
    expectError(notString, 400, { type: 'invalid_request_error', param: 'credentials.api_key' });
    expectError(await post({ ...base, credentials: { api_key: SECRET }, options: { region: 'x' } }), 400, {
      type: 'invalid_request_error',
      param: 'options.region',
    });
    expectError(await post({ ...base, credentials: { api_key: SECRET }, options: { organization: 5 } }), 400, {
      type: 'invalid_request_error',
      param: 'options.organization',
    });
    expectError(await post({ ...base, provider: 'openrouter', credentials: { api_key: SECRET } }), 400, { type: 'invalid_request_error', param: 'provider' });
    expectError(await post({ ...base, provider: 'azure-openai', credentials: { api_key: SECRET } }), 400, {
      type: 'invalid_request_error',
      param: 'options.x-gateway-azure-resource-name',
    });
    for (const hostile of ['evil.com/x', 'a@b', 'a:1', 'a.b', 'a%2fb', 'x'.repeat(300)]) {
      const res = await post({ ...base, provider: 'azure-openai', credentials: { api_key: SECRET }, options: { 'x-gateway-azure-resource-name': hostile } });
      expectError(res, 400, { type: 'invalid_request_error', param: 'options.x-gateway-azure-resource-name' });
    }
    expectError(await post({ slug: 'Not A Slug', provider: 'openai', credentials: { api_key: SECRET } }), 400, {
      type: 'invalid_request_error',
      param: 'slug',
    });
    expectError(await post({ provider: 'openai', credentials: { api_key: SECRET } }), 400, { type: 'invalid_request_error', param: 'slug' });
    expectError(await post({ ...base, credentials: { api_key: SECRET }, id: 'mine' }), 400, { type: 'invalid_request_error', param: 'id' });
    expectError(await post({ ...base, credentials: { api_key: SECRET }, createdAt: 1 }), 400, { type: 'invalid_request_error', param: 'createdAt' });
    // A body that is not valid JSON: the parser's message must not quote it.
    const malformed = await api(gw, 'POST', '/v1/integrations', {
      rawBody: `{"slug": "x", "credentials": {"api_key": ${SECRET}}}`,
      headers: { 'content-type': 'application/json' },
    });
    expectError(malformed, 400, { type: 'invalid_request_error' });

    for (const res of [missing, unknown, notString, malformed]) expect(JSON.stringify(res.body)).not.toContain(SECRET.slice(3));

    // Options are kept under their header names; the short aliases are accepted too.
    const azure = await post({
      slug: 'azure',
      provider: 'azure-openai',
      credentials: { api_key: SECRET },
      options: { resource_name: 'my-resource', 'x-gateway-azure-api-version': '2025-04-01-preview' },
    });
    expect(azure.status).toBe(200);
    expect(azure.body.options).toEqual({ 'x-gateway-azure-resource-name': 'my-resource', 'x-gateway-azure-api-version': '2025-04-01-preview' });
    expect(JSON.stringify(azure.body)).not.toContain(SECRET);
  });

  it('keeps slugs unique per workspace (409)', async () => {
    const body = { slug: 'dup', provider: 'openai', credentials: { api_key: SECRET } };
    expect((await api(gw, 'POST', '/v1/integrations', { body })).status).toBe(200);
    const again = await api(gw, 'POST', '/v1/integrations', { body });
    expectError(again, 409, { type: 'conflict_error', param: 'slug' });
    expect(JSON.stringify(again.body)).not.toContain(SECRET);

    // Another workspace of the organisation may use the same slug.
    expect((await api(gw, 'POST', '/v1/admin/workspaces', { body: { name: 'Other', slug: 'other-ws' } })).status).toBe(200);
    const elsewhere = await api(gw, 'POST', '/v1/integrations', { body: { ...body, workspace_id: 'other-ws' } });
    expect(elsewhere.status).toBe(200);
    expect((await api(gw, 'GET', '/v1/integrations?workspace_id=other-ws')).body.data.map((i: any) => i.slug)).toEqual(['dup']);
  });

  it("another organisation's integration answers 404 and cannot be resolved", async () => {
    await api(gw, 'POST', '/v1/integrations', { body: { slug: 'private', provider: 'openai', credentials: { api_key: SECRET } } });
    const other = await createOrganisation(gw);
    expectError(await api(other, 'GET', '/v1/integrations/private'), 404, { type: 'not_found_error' });
    expectError(await api(other, 'DELETE', '/v1/integrations/private'), 404, { type: 'not_found_error' });
    expect((await api(other, 'GET', '/v1/integrations')).body).toEqual({ object: 'list', data: [] });
    const otherScope = { organisationId: other.organisationId, workspaceId: other.workspaceId };
    await expect(gw.gateway.services.integrations.resolve(otherScope, '@private')).rejects.toMatchObject({ kind: 'not_found' });
    expect((await api(gw, 'GET', '/v1/integrations/private')).status).toBe(200);
  });

  it('reads an integration by id as well as by slug, and updates it with PUT (replace) and PATCH (merge)', async () => {
    const created = await api(gw, 'POST', '/v1/integrations', {
      body: { slug: 'rotating', provider: 'openai', name: 'Rotating', credentials: { api_key: SECRET }, options: { organization: 'org-1' } },
    });
    expect(created.status).toBe(200);
    const { id } = created.body;
    expect((await api(gw, 'GET', `/v1/integrations/${id}`)).body).toEqual(created.body);
    expect((await api(gw, 'GET', '/v1/integrations/@rotating')).body).toEqual(created.body);
    const scope = await gw.gateway.services.workspaces.resolveScope(await gw.gateway.services.apiKeys.authenticate(gw.key));
    const credentials = async () => (await gw.gateway.services.integrations.resolve(scope, '@rotating')).credentials;

    // PATCH: only the fields given change; a credential rotation keeps name and options.
    const rotated = await api(gw, 'PATCH', `/v1/integrations/${id}`, { body: { credentials: { api_key: 'sk-rotated-1111222233334444' } } });
    expect(rotated.status).toBe(200);
    expect(rotated.body).toEqual(created.body);
    expect(await credentials()).toEqual({ api_key: 'sk-rotated-1111222233334444' });
    const renamed = await api(gw, 'PATCH', '/v1/integrations/rotating', { body: { name: 'Renamed', options: { project: 'proj-2' } } });
    expect(renamed.body).toMatchObject({ id, slug: 'rotating', name: 'Renamed', options: { 'x-gateway-openai-project': 'proj-2' } });
    expect(await credentials()).toEqual({ api_key: 'sk-rotated-1111222233334444' });

    // PUT: the whole integration; fields left out fall back to their defaults.
    const replaced = await api(gw, 'PUT', `/v1/integrations/${id}`, { body: { slug: 'rotating', provider: 'openai', credentials: { api_key: SECRET } } });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({ id, slug: 'rotating', name: 'rotating', options: {} });
    expect(await credentials()).toEqual({ api_key: SECRET });
    expect(JSON.stringify([rotated.body, renamed.body, replaced.body])).not.toContain('sk-');

    // Same validation as create, never echoing a value; slug and provider cannot change.
    expectError(await api(gw, 'PUT', `/v1/integrations/${id}`, { body: { name: 'no credentials' } }), 400, {
      type: 'invalid_request_error',
      param: 'credentials',
    });
    const bad = await api(gw, 'PATCH', `/v1/integrations/${id}`, { body: { credentials: { api_key: 'sk-bad', extra: 'sk-hidden-value' } } });
    expectError(bad, 400, { type: 'invalid_request_error', param: 'credentials.extra' });
    expect(JSON.stringify(bad.body)).not.toContain('sk-hidden-value');
    expectError(await api(gw, 'PATCH', `/v1/integrations/${id}`, { body: { slug: 'other' } }), 400, { type: 'invalid_request_error', param: 'slug' });
    expectError(await api(gw, 'PATCH', `/v1/integrations/${id}`, { body: { provider: 'together-ai' } }), 400, {
      type: 'invalid_request_error',
      param: 'provider',
    });
    expectError(await api(gw, 'PATCH', `/v1/integrations/${id}`, { body: { colour: 'red' } }), 400, { type: 'invalid_request_error' });
    expect(await credentials()).toEqual({ api_key: SECRET });

    // Unknown and other organisations' integrations: 404 by id and by slug.
    expectError(await api(gw, 'PATCH', '/v1/integrations/00000000-0000-4000-8000-000000000000', { body: { name: 'x' } }), 404, { type: 'not_found_error' });
    const other = await createOrganisation(gw, 'Integration updater');
    expectError(await api(other, 'GET', `/v1/integrations/${id}`), 404, { type: 'not_found_error' });
    expectError(await api(other, 'PATCH', `/v1/integrations/${id}`, { body: { name: 'stolen' } }), 404, { type: 'not_found_error' });
    expectError(await api(other, 'PUT', '/v1/integrations/rotating', { body: { credentials: { api_key: SECRET } } }), 404, { type: 'not_found_error' });
    expect((await api(gw, 'DELETE', `/v1/integrations/${id}`)).body).toEqual({ id, object: 'integration', deleted: true });
  });

  it('generated a master key into DATA_DIR (mode 0600) since GATEWAY_MASTER_KEY is unset', async () => {
    const file = join(gw.config.dataDir, 'master.key');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(Buffer.from((await readFile(file, 'utf8')).trim(), 'base64')).toHaveLength(32);
  });
});
