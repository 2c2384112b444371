import { api, createOrganisation, expectNonObjectBodiesRefused, useTestGateway } from '../support/gateway';
import { expectError } from '../support/expect';

const gw = useTestGateway();

const RANDOM_UUID = '3f9a1c52-8d0e-4b7a-9c61-2a5e8f7d4b10';

describe('labels over REST', () => {
  it('every workspace starts with the three default labels', async () => {
    const res = await api(gw, 'GET', '/v1/labels');
    expect(res.status).toBe(200);
    expect(res.body.total).toBe(3);
    expect(res.body.data.map((l: any) => l.name).sort()).toEqual(['development', 'production', 'staging']);
    for (const label of res.body.data) expect(label.is_universal).toBe(true);
  });

  it('creates, reads, updates and deletes a label', async () => {
    const created = await api(gw, 'POST', '/v1/labels', { body: { name: 'canary', description: 'Canary rollout', color_code: '#AA00FF' } });
    expect(created.status).toBe(200);
    expect(Object.keys(created.body)).toEqual(['id']);
    const id = created.body.id;

    const got = await api(gw, 'GET', `/v1/labels/${id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual({
      id,
      name: 'canary',
      description: 'Canary rollout',
      color_code: '#AA00FF',
      organisation_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      workspace_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      is_universal: false,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      last_updated_at: expect.stringMatching(/Z$/),
      status: 'active',
    });

    const updated = await api(gw, 'PUT', `/v1/labels/${id}`, { body: { description: 'Five percent of traffic' } });
    expect(updated.status).toBe(200);
    expect(updated.body).toEqual({});
    const after = await api(gw, 'GET', `/v1/labels/${id}`);
    expect(after.body.description).toBe('Five percent of traffic');
    expect(after.body.name).toBe('canary');
    expect(Date.parse(after.body.last_updated_at)).toBeGreaterThanOrEqual(Date.parse(got.body.last_updated_at));

    expect((await api(gw, 'DELETE', `/v1/labels/${id}`)).body).toEqual({});
    expectError(await api(gw, 'GET', `/v1/labels/${id}`), 404, { type: 'not_found_error', param: null });
    expectError(await api(gw, 'DELETE', `/v1/labels/${id}`), 404, { type: 'not_found_error', param: null });
  });

  it('an unset description and colour are empty strings, never null', async () => {
    const { body } = await api(gw, 'POST', '/v1/labels', { body: { name: 'bare' } });
    const label = (await api(gw, 'GET', `/v1/labels/${body.id}`)).body;
    expect(label.description).toBe('');
    expect(label.color_code).toBe('');
  });

  it('pages and searches with totals', async () => {
    for (let i = 0; i < 7; i++) {
      expect((await api(gw, 'POST', '/v1/labels', { body: { name: `page-item-${i}` } })).status).toBe(200);
    }
    const first = await api(gw, 'GET', '/v1/labels?search=page-item&page_size=3&current_page=0');
    expect(first.body.total).toBe(7);
    expect(first.body.data.map((l: any) => l.name)).toEqual(['page-item-0', 'page-item-1', 'page-item-2']);
    const last = await api(gw, 'GET', '/v1/labels?search=PAGE-ITEM&page_size=3&current_page=2');
    expect(last.body.total).toBe(7);
    expect(last.body.data.map((l: any) => l.name)).toEqual(['page-item-6']);
    const beyond = await api(gw, 'GET', '/v1/labels?search=page-item&page_size=3&current_page=5');
    expect(beyond.body).toEqual({ total: 7, data: [] });
  });

  it('searches for LIKE wildcards and backslashes as the characters they are', async () => {
    for (const name of ['pct-100', 'under_score', 'back-slash']) expect((await api(gw, 'POST', '/v1/labels', { body: { name } })).status).toBe(200);
    const names = async (search: string) =>
      (await api(gw, 'GET', `/v1/labels?search=${encodeURIComponent(search)}&page_size=100`)).body.data.map((l: any) => l.name);
    expect(await names('%')).toEqual([]);
    expect(await names('_')).toEqual(['under_score']);
    expect(await names('r_s')).toEqual(['under_score']);
    expect(await names('pct%')).toEqual([]);
    expect(await names('\\')).toEqual([]);
    expect(await names('k\\-s')).toEqual([]);
    expect(await names('k-s')).toEqual(['back-slash']);
  });

  it('refuses paging inputs out of range', async () => {
    expectError(await api(gw, 'GET', '/v1/labels?page_size=0'), 400, { type: 'invalid_request_error', param: 'page_size' });
    expectError(await api(gw, 'GET', '/v1/labels?page_size=101'), 400, { type: 'invalid_request_error', param: 'page_size' });
    expectError(await api(gw, 'GET', '/v1/labels?page_size=abc'), 400, { type: 'invalid_request_error', param: 'page_size' });
    expectError(await api(gw, 'GET', '/v1/labels?current_page=-1'), 400, { type: 'invalid_request_error', param: 'current_page' });
    expectError(await api(gw, 'GET', '/v1/labels?sort=name'), 400, { type: 'invalid_request_error', param: 'sort' });
  });

  it('keeps names unique per workspace (409) and refuses reserved or malformed names', async () => {
    expect((await api(gw, 'POST', '/v1/labels', { body: { name: 'unique-one' } })).status).toBe(200);
    expectError(await api(gw, 'POST', '/v1/labels', { body: { name: 'unique-one' } }), 409, { type: 'conflict_error', param: 'name' });
    expectError(await api(gw, 'POST', '/v1/labels', { body: { name: 'production' } }), 409, { type: 'conflict_error', param: 'name' });
    for (const name of ['latest', 'default', '12345', 'has space', 'a@b', '', 'x'.repeat(101)]) {
      expectError(await api(gw, 'POST', '/v1/labels', { body: { name } }), 400, { type: 'invalid_request_error', param: 'name' });
    }
    expectError(await api(gw, 'POST', '/v1/labels', { body: {} }), 400, { type: 'invalid_request_error', param: 'name' });
    expectError(await api(gw, 'POST', '/v1/labels', { body: { name: 'ok-name', color_code: 'red' } }), 400, {
      type: 'invalid_request_error',
      param: 'color_code',
    });
    expectError(await api(gw, 'POST', '/v1/labels', { body: { name: 'ok-name', description: 'd'.repeat(2001) } }), 400, {
      type: 'invalid_request_error',
      param: 'description',
    });
  });

  it('renaming onto a taken name is a 409 and changes nothing', async () => {
    const a = (await api(gw, 'POST', '/v1/labels', { body: { name: 'rename-a' } })).body.id;
    await api(gw, 'POST', '/v1/labels', { body: { name: 'rename-b' } });
    expectError(await api(gw, 'PUT', `/v1/labels/${a}`, { body: { name: 'rename-b', description: 'x' } }), 409, { type: 'conflict_error', param: 'name' });
    const label = (await api(gw, 'GET', `/v1/labels/${a}`)).body;
    expect(label).toMatchObject({ name: 'rename-a', description: '' });
  });

  it('default labels cannot be deleted or renamed', async () => {
    const production = (await api(gw, 'GET', '/v1/labels?search=production')).body.data[0];
    expectError(await api(gw, 'DELETE', `/v1/labels/${production.id}`), 400, { type: 'invalid_request_error' });
    expectError(await api(gw, 'PUT', `/v1/labels/${production.id}`, { body: { name: 'prod' } }), 400, { type: 'invalid_request_error', param: 'name' });
    expect((await api(gw, 'PUT', `/v1/labels/${production.id}`, { body: { color_code: '#000000' } })).status).toBe(200);
    expect((await api(gw, 'GET', `/v1/labels/${production.id}`)).body.color_code).toBe('#000000');
  });

  it('answers bad input with 400 in the error shape, never 500', async () => {
    expectError(await api(gw, 'GET', '/v1/labels/not-a-uuid'), 400, { type: 'invalid_request_error', param: 'id' });
    expectError(await api(gw, 'PUT', '/v1/labels/1234', { body: { description: 'x' } }), 400, { type: 'invalid_request_error', param: 'id' });
    expectError(await api(gw, 'DELETE', `/v1/labels/${RANDOM_UUID}x`), 400, { type: 'invalid_request_error', param: 'id' });
    await expectNonObjectBodiesRefused(gw, '/v1/labels');
    expectError(await api(gw, 'POST', '/v1/labels', { body: { name: 'mass', id: RANDOM_UUID } }), 400, { type: 'invalid_request_error', param: 'id' });
    expectError(await api(gw, 'POST', '/v1/labels', { body: { name: 'mass', status: 'archived' } }), 400, { type: 'invalid_request_error', param: 'status' });
    expectError(await api(gw, 'POST', '/v1/labels', { body: { name: 'mass', colorCode: '#000000' } }), 400, {
      type: 'invalid_request_error',
      param: 'colorCode',
    });
    expectError(await api(gw, 'POST', '/v1/labels', { body: { name: 'mass', is_universal: true } }), 400, {
      type: 'invalid_request_error',
      param: 'is_universal',
    });
    expectError(await api(gw, 'POST', '/v1/labels', { body: { name: 123 } }), 400, { type: 'invalid_request_error', param: 'name' });
    expectError(
      await api(gw, 'POST', '/v1/labels', { rawBody: JSON.stringify({ name: 'x'.repeat(2_000_000) }), headers: { 'content-type': 'application/json' } }),
      413,
      { type: 'invalid_request_error', param: null },
    );
    // None of the refused requests wrote a row.
    expect((await api(gw, 'GET', '/v1/labels?search=mass')).body.total).toBe(0);
  });

  it('answers unknown ids with 404', async () => {
    expectError(await api(gw, 'GET', `/v1/labels/${RANDOM_UUID}`), 404, { type: 'not_found_error', param: null });
    expectError(await api(gw, 'PUT', `/v1/labels/${RANDOM_UUID}`, { body: { description: 'x' } }), 404, { type: 'not_found_error', param: null });
  });

  it('accepts the organisation and workspace (id or slug) as query inputs', async () => {
    const id = (await api(gw, 'POST', '/v1/labels', { body: { name: 'scoped', workspace_id: 'default' } })).body.id;
    const label = (await api(gw, 'GET', `/v1/labels/${id}`)).body;
    expect((await api(gw, 'GET', `/v1/labels/${id}?organisation_id=${label.organisation_id}&workspace_id=${label.workspace_id}`)).status).toBe(200);
    expect((await api(gw, 'GET', `/v1/labels/${id}?workspace_id=default`)).status).toBe(200);
    expectError(await api(gw, 'GET', `/v1/labels/${id}?organisation_id=${RANDOM_UUID}`), 404, { type: 'not_found_error', param: null });
    expectError(await api(gw, 'GET', `/v1/labels/${id}?workspace_id=nowhere`), 404, { type: 'not_found_error', param: null });
  });

  it('labels of another workspace are invisible, and names may repeat across workspaces', async () => {
    const ws = await api(gw, 'POST', '/v1/admin/workspaces', { body: { name: 'Team B', slug: 'team-b' } });
    expect(ws.status).toBe(200);
    const teamB = await api(gw, 'GET', '/v1/labels?workspace_id=team-b');
    expect(teamB.body.total).toBe(3);
    const id = (await api(gw, 'POST', '/v1/labels', { body: { name: 'canary', workspace_id: 'team-b' } })).body.id;
    expect(id).toBeDefined();
    expectError(await api(gw, 'GET', `/v1/labels/${id}`), 404, { type: 'not_found_error', param: null });
    expect((await api(gw, 'GET', `/v1/labels/${id}?workspace_id=${ws.body.id}`)).status).toBe(200);

    const wsKey = (await api(gw, 'POST', '/v1/api-keys', { body: { name: 'team b key', workspace_id: 'team-b' } })).body.key;
    const asTeamB = { url: gw.url, key: wsKey };
    expect((await api(asTeamB, 'GET', `/v1/labels/${id}`)).status).toBe(200);
    expectError(await api(asTeamB, 'GET', '/v1/labels?workspace_id=default'), 403, { type: 'permission_error', param: null });
  });

  it("another organisation's label answers exactly like a missing one", async () => {
    const other = await createOrganisation(gw);
    const theirs = (await api(other, 'POST', '/v1/labels', { body: { name: 'secret' } })).body.id;
    const missing = await api(gw, 'GET', `/v1/labels/${RANDOM_UUID}`);
    const foreign = await api(gw, 'GET', `/v1/labels/${theirs}`);
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.message.replace(theirs, 'ID')).toBe(missing.body.error.message.replace(RANDOM_UUID, 'ID'));
    expect((await api(gw, 'PUT', `/v1/labels/${theirs}`, { body: { description: 'mine now' } })).status).toBe(404);
    expect((await api(gw, 'DELETE', `/v1/labels/${theirs}`)).status).toBe(404);
    expect((await api(other, 'GET', `/v1/labels/${theirs}`)).body.description).toBe('');
    expect((await api(gw, 'GET', '/v1/labels?search=secret')).body.total).toBe(0);
  });
});
