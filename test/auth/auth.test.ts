import { hashApiKey } from '../../src/auth/api-key-secret';
import { api, createOrganisation, useTestGateway } from '../support/gateway';

const gw = useTestGateway();

describe('API keys and administration', () => {
  it('answers a missing, unknown or malformed key with 401 in the error shape', async () => {
    for (const key of [null, 'gw_unknown', '']) {
      const res = await api(gw, 'GET', '/v1/labels', { key });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: { message: expect.any(String), type: 'authentication_error', param: null, code: 'invalid_api_key' } });
    }
  });

  it('keeps keys only as SHA-256 hashes', async () => {
    const issued = await api(gw, 'POST', '/v1/api-keys', { body: { name: 'hashed' } });
    expect(issued.status).toBe(200);
    const rows = await gw.gateway.services.db.prisma.$queryRawUnsafe<Array<Record<string, unknown>>>('SELECT * FROM api_keys');
    const dump = JSON.stringify(rows);
    expect(dump).not.toContain(issued.body.key);
    expect(dump).not.toContain(gw.key);
    expect(rows.map((r) => r.hash)).toEqual(expect.arrayContaining([hashApiKey(issued.body.key), hashApiKey(gw.key)]));
  });

  it('issues organisation and workspace keys, lists them without secrets, and revokes them', async () => {
    const issued = await api(gw, 'POST', '/v1/api-keys', { body: { name: 'ci key', workspace_id: 'default' } });
    expect(issued.body).toMatchObject({ id: expect.any(String), object: 'api_key', name: 'ci key', key: expect.stringMatching(/^gw_/), revoked_at: null });
    expect(issued.body.workspace_id).toMatch(/^[0-9a-f-]{36}$/);
    const wsKey = { url: gw.url, key: issued.body.key as string };
    expect((await api(wsKey, 'GET', '/v1/labels')).status).toBe(200);

    const listed = await api(gw, 'GET', '/v1/api-keys');
    expect(listed.status).toBe(200);
    const entry = listed.body.data.find((k: any) => k.id === issued.body.id);
    expect(entry).toMatchObject({ name: 'ci key', prefix: issued.body.key.slice(0, 9) });
    expect(JSON.stringify(listed.body)).not.toContain(issued.body.key);
    expect(Object.keys(entry)).not.toContain('hash');

    expect((await api(gw, 'DELETE', `/v1/api-keys/${issued.body.id}`)).status).toBe(200);
    const revoked = await api(wsKey, 'GET', '/v1/labels');
    expect(revoked.status).toBe(401);
    expect(revoked.body.error.type).toBe('authentication_error');
    expect((await api(gw, 'GET', '/v1/api-keys')).body.data.find((k: any) => k.id === issued.body.id).revoked_at).toEqual(expect.any(String));
  });

  it('refuses administration to workspace keys with 403', async () => {
    const wsKey = { url: gw.url, key: (await api(gw, 'POST', '/v1/api-keys', { body: { name: 'ws', workspace_id: 'default' } })).body.key };
    for (const [method, path, body] of [
      ['GET', '/v1/api-keys', undefined],
      ['POST', '/v1/api-keys', { name: 'escalate' }],
      ['GET', '/v1/admin/workspaces', undefined],
      ['POST', '/v1/admin/workspaces', { name: 'x', slug: 'x' }],
      ['DELETE', '/v1/api-keys/3f9a1c52-8d0e-4b7a-9c61-2a5e8f7d4b10', undefined],
    ] as const) {
      const res = await api(wsKey, method, path, { body });
      expect(res.status).toBe(403);
      expect(res.body.error.type).toBe('permission_error');
    }
  });

  it('creates and lists workspaces; slugs are unique (409) and validated (400)', async () => {
    const created = await api(gw, 'POST', '/v1/admin/workspaces', { body: { name: 'Research', slug: 'research' } });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ object: 'workspace', slug: 'research', name: 'Research' });
    expect((await api(gw, 'POST', '/v1/admin/workspaces', { body: { name: 'Again', slug: 'research' } })).status).toBe(409);
    const bad = await api(gw, 'POST', '/v1/admin/workspaces', { body: { name: 'Bad', slug: 'Not A Slug' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe('slug');
    const listed = await api(gw, 'GET', '/v1/admin/workspaces');
    expect(listed.body.data.map((w: any) => w.slug)).toEqual(expect.arrayContaining(['default', 'research']));
    // A new workspace gets the default labels.
    expect((await api(gw, 'GET', '/v1/labels?workspace_id=research')).body.total).toBe(3);
  });

  it('answers an unknown key id or workspace with 404', async () => {
    expect((await api(gw, 'DELETE', '/v1/api-keys/3f9a1c52-8d0e-4b7a-9c61-2a5e8f7d4b10')).status).toBe(404);
    expect((await api(gw, 'DELETE', '/v1/api-keys/nope')).status).toBe(404);
    expect((await api(gw, 'POST', '/v1/api-keys', { body: { name: 'x', workspace_id: 'nowhere' } })).status).toBe(404);
  });

  it('accepts the gateway key as Authorization: Bearer gw_… when no provider is named', async () => {
    const bearer = await api(gw, 'GET', '/v1/labels', { key: null, headers: { authorization: `Bearer ${gw.key}` } });
    expect(bearer.status).toBe(200);
    expect(bearer.body.data.length).toBeGreaterThan(0);
    const graphql = await fetch(`${gw.url}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ labels { total } }' }),
    });
    expect((await graphql.json()).data.labels.total).toBeGreaterThan(0);
    // A wrong bearer key is a 401, and a bearer that is not a gateway key is not read as one.
    expect((await api(gw, 'GET', '/v1/labels', { key: null, headers: { authorization: 'Bearer gw_unknown' } })).status).toBe(401);
    expect((await api(gw, 'GET', '/v1/labels', { key: null, headers: { authorization: 'Bearer sk-provider-key' } })).body.error.message).toMatch(
      /^Missing API key/,
    );
    // With x-gateway-provider, Authorization belongs to the provider (client mode): never taken as the gateway key.
    const clientMode = await api(gw, 'GET', '/v1/files', { key: null, headers: { authorization: `Bearer ${gw.key}`, 'x-gateway-provider': 'openai' } });
    expect(clientMode.status).toBe(401);
    // The x-gateway-api-key header wins over a bearer.
    expect((await api(gw, 'GET', '/v1/labels', { headers: { authorization: 'Bearer gw_unknown' } })).status).toBe(200);
  });

  it('never lets an organisation lose its last organisation key (409), but revokes it once another exists', async () => {
    const org = await createOrganisation(gw, 'Last key org');
    const [own] = (await api(org, 'GET', '/v1/api-keys')).body.data;
    const refused = await api(org, 'DELETE', `/v1/api-keys/${own.id}`);
    expect(refused.status).toBe(409);
    expect(refused.body.error).toEqual({
      message: expect.stringMatching(/last organisation key/),
      type: 'conflict_error',
      param: null,
      code: 'last_organisation_key',
    });
    expect((await api(org, 'GET', '/v1/labels')).status).toBe(200);

    // Workspace keys do not count: the organisation key is still the last one.
    const wsKey = await api(org, 'POST', '/v1/api-keys', { body: { name: 'ws', workspace_id: 'default' } });
    expect((await api(org, 'DELETE', `/v1/api-keys/${own.id}`)).status).toBe(409);
    expect((await api(org, 'DELETE', `/v1/api-keys/${wsKey.body.id}`)).status).toBe(200);

    const second = await api(org, 'POST', '/v1/api-keys', { body: { name: 'second admin' } });
    const secondKey = { url: gw.url, key: second.body.key as string };
    expect((await api(secondKey, 'DELETE', `/v1/api-keys/${own.id}`)).status).toBe(200);
    expect((await api(org, 'GET', '/v1/labels')).status).toBe(401);
    const last = await api(secondKey, 'DELETE', `/v1/api-keys/${second.body.id}`);
    expect(last.status).toBe(409);
    expect((await api(secondKey, 'GET', '/v1/api-keys')).body.data.filter((k: any) => k.revoked_at === null && k.workspace_id === null)).toHaveLength(1);
  });
});
