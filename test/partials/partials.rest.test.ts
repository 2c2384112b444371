import { api, createOrganisation, expectNonObjectBodiesRefused, useTestGateway } from '../support/gateway';
import { expectError } from '../support/expect';

const gw = useTestGateway();

const RANDOM_UUID = '3f9a1c52-8d0e-4b7a-9c61-2a5e8f7d4b10';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

async function createPartial(body: Record<string, unknown>, as: { url: string; key: string } = gw) {
  const res = await api(as, 'POST', '/v1/prompts/partials', { body });
  expect(res.status).toBe(200);
  return res.body as { id: string; slug: string; version_id: string };
}

describe('prompt partials over REST', () => {
  it('creates a partial and reads it by id and by slug', async () => {
    const created = await api(gw, 'POST', '/v1/prompts/partials', {
      body: { name: 'Support Tone', string: 'Be kind and brief.', version_description: 'first cut' },
    });
    expect(created.status).toBe(200);
    expect(Object.keys(created.body)).toEqual(['id', 'slug', 'version_id']);
    expect(created.body).toEqual({ id: expect.stringMatching(UUID), slug: 'support-tone', version_id: expect.stringMatching(UUID) });

    const byId = await api(gw, 'GET', `/v1/prompts/partials/${created.body.id}`);
    expect(byId.status).toBe(200);
    expect(byId.body).toEqual({
      id: created.body.id,
      slug: 'support-tone',
      name: 'Support Tone',
      collection_id: expect.stringMatching(UUID),
      string: 'Be kind and brief.',
      version: 1,
      version_description: 'first cut',
      prompt_partial_version_id: created.body.version_id,
      created_at: expect.stringMatching(ISO),
      last_updated_at: expect.stringMatching(ISO),
      status: 'active',
    });
    const bySlug = await api(gw, 'GET', '/v1/prompts/partials/support-tone');
    expect(bySlug.status).toBe(200);
    expect(bySlug.body).toEqual(byId.body);
  });

  it('lists summaries as a bare array, filtered by collection', async () => {
    const a = await createPartial({ name: 'List A', string: 'a' });
    const b = await createPartial({ name: 'List B', string: 'b' });
    const list = await api(gw, 'GET', '/v1/prompts/partials');
    expect(list.status).toBe(200);
    expect(Array.isArray(list.body)).toBe(true);
    const summary = list.body.find((p: any) => p.id === a.id);
    expect(summary).toEqual({
      id: a.id,
      slug: 'list-a',
      name: 'List A',
      collection_id: expect.stringMatching(UUID),
      created_at: expect.stringMatching(ISO),
      last_updated_at: expect.stringMatching(ISO),
      status: 'active',
      object: 'partial',
    });
    expect(list.body.map((p: any) => p.id)).toContain(b.id);

    // Every partial is in the workspace's default collection.
    const collectionId = summary.collection_id;
    expect(new Set(list.body.map((p: any) => p.collection_id))).toEqual(new Set([collectionId]));
    const filtered = await api(gw, 'GET', `/v1/prompts/partials?collection_id=${collectionId}`);
    expect(filtered.body.map((p: any) => p.id)).toEqual(list.body.map((p: any) => p.id));
    expect((await api(gw, 'POST', '/v1/prompts/partials', { body: { name: 'In collection', string: 'x', collection_id: collectionId } })).status).toBe(200);

    expectError(await api(gw, 'GET', `/v1/prompts/partials?collection_id=${RANDOM_UUID}`), 404, { type: 'not_found_error', param: 'collection_id' });
    expectError(await api(gw, 'GET', '/v1/prompts/partials?collection_id=nope'), 400, { type: 'invalid_request_error', param: 'collection_id' });
    expectError(await api(gw, 'POST', '/v1/prompts/partials', { body: { name: 'x', string: 'x', collection_id: RANDOM_UUID } }), 404, {
      type: 'not_found_error',
      param: 'collection_id',
    });
  });

  it('derives unique slugs from names and keeps them across renames', async () => {
    const first = await createPartial({ name: 'Crème Brûlée: Recipe!', string: 'x' });
    expect(first.slug).toBe('creme-brulee-recipe');
    const second = await createPartial({ name: 'creme brulee recipe', string: 'y' });
    expect(second.slug).toBe('creme-brulee-recipe-2');
    const third = await createPartial({ name: '  CREME--BRULEE  recipe ', string: 'z' });
    expect(third.slug).toBe('creme-brulee-recipe-3');
    expect((await createPartial({ name: '日本語', string: 'z' })).slug).toMatch(/^partial(-\d+)?$/);
    // A name shaped like a UUID never gives a slug that would be read as an id.
    const uuidNamed = await createPartial({ name: RANDOM_UUID, string: 'z' });
    expect(uuidNamed.slug).toBe(`partial-${RANDOM_UUID}`);
    expect((await api(gw, 'GET', `/v1/prompts/partials/${uuidNamed.slug}`)).body.id).toBe(uuidNamed.id);

    const renamed = await api(gw, 'PUT', `/v1/prompts/partials/${first.id}`, { body: { name: 'Something else' } });
    expect(renamed.status).toBe(200);
    const after = await api(gw, 'GET', '/v1/prompts/partials/creme-brulee-recipe');
    expect(after.body).toMatchObject({ id: first.id, name: 'Something else', slug: 'creme-brulee-recipe', version: 1 });
    // A new partial named like the renamed one does not take its slug.
    expect((await createPartial({ name: 'Something else', string: 'q' })).slug).toBe('something-else');
    expect((await createPartial({ name: 'Crème brûlée recipe', string: 'q' })).slug).toBe('creme-brulee-recipe-4');
  });

  it('parallel creations with one name get distinct slugs', async () => {
    const results = await Promise.all(Array.from({ length: 8 }, () => api(gw, 'POST', '/v1/prompts/partials', { body: { name: 'Race Name', string: 'x' } })));
    for (const res of results) expect(res.status).toBe(200);
    const slugs = results.map((r) => r.body.slug).sort();
    expect(slugs).toEqual(['race-name', ...Array.from({ length: 7 }, (_, i) => `race-name-${i + 2}`)].sort());
  });

  it('saves a new version only when the text changes; versions are newest first', async () => {
    const p = await createPartial({ name: 'Versioned', string: 'v1 text', version_description: 'one' });
    const v2 = await api(gw, 'PUT', `/v1/prompts/partials/${p.id}`, { body: { string: 'v2 text', description: 'two' } });
    expect(v2.status).toBe(200);
    expect(Object.keys(v2.body)).toEqual(['prompt_partial_version_id']);
    expect(v2.body.prompt_partial_version_id).toMatch(UUID);
    expect(v2.body.prompt_partial_version_id).not.toBe(p.version_id);

    // Name, status and an unchanged text save no version.
    const same = await api(gw, 'PUT', `/v1/prompts/partials/versioned`, { body: { string: 'v2 text', name: 'Versioned renamed' } });
    expect(same.body.prompt_partial_version_id).toBe(v2.body.prompt_partial_version_id);
    expect((await api(gw, 'PUT', `/v1/prompts/partials/${p.id}`, { body: {} })).body.prompt_partial_version_id).toBe(v2.body.prompt_partial_version_id);

    const v3 = await api(gw, 'PUT', `/v1/prompts/partials/versioned`, { body: { string: 'v3 text' } });
    const versions = await api(gw, 'GET', `/v1/prompts/partials/${p.id}/versions`);
    expect(versions.status).toBe(200);
    expect(versions.body.map((v: any) => v.version)).toEqual(['3', '2', '1']);
    expect(versions.body.map((v: any) => v.prompt_partial_version_id)).toEqual([
      v3.body.prompt_partial_version_id,
      v2.body.prompt_partial_version_id,
      p.version_id,
    ]);
    expect(versions.body[1]).toEqual({
      prompt_partial_id: p.id,
      prompt_partial_version_id: v2.body.prompt_partial_version_id,
      slug: 'versioned',
      version: '2',
      string: 'v2 text',
      description: 'two',
      created_at: expect.stringMatching(ISO),
      prompt_version_status: 'active',
      object: 'partial',
    });
    expect(versions.body[0].description).toBe('');
    expect((await api(gw, 'GET', '/v1/prompts/partials/versioned/versions')).body).toEqual(versions.body);

    // A description without a text change describes the newest version; still no new version.
    const described = await api(gw, 'PUT', `/v1/prompts/partials/${p.id}`, { body: { description: 'three' } });
    expect(described.body.prompt_partial_version_id).toBe(v3.body.prompt_partial_version_id);
    const again = (await api(gw, 'GET', `/v1/prompts/partials/${p.id}/versions`)).body;
    expect(again.map((v: any) => [v.version, v.description])).toEqual([
      ['3', 'three'],
      ['2', 'two'],
      ['1', 'one'],
    ]);
  });

  it('makeDefault switches what a read returns', async () => {
    const p = await createPartial({ name: 'Publishing', string: 'first' });
    const v2 = (await api(gw, 'PUT', `/v1/prompts/partials/${p.id}`, { body: { string: 'second', description: 'draft' } })).body;
    // A new version is a draft until published.
    expect((await api(gw, 'GET', `/v1/prompts/partials/${p.id}`)).body).toMatchObject({ string: 'first', version: 1, prompt_partial_version_id: p.version_id });

    const made = await api(gw, 'PUT', `/v1/prompts/partials/${p.id}/makeDefault`, { body: { version: 2 } });
    expect(made.status).toBe(200);
    expect(made.body).toEqual({});
    expect((await api(gw, 'GET', `/v1/prompts/partials/publishing`)).body).toMatchObject({
      string: 'second',
      version: 2,
      version_description: 'draft',
      prompt_partial_version_id: v2.prompt_partial_version_id,
    });

    expect((await api(gw, 'PUT', `/v1/prompts/partials/publishing/makeDefault`, { body: { version: 1 } })).status).toBe(200);
    expect((await api(gw, 'GET', `/v1/prompts/partials/${p.id}`)).body).toMatchObject({ string: 'first', version: 1 });

    // The version exactly as /versions answers it (a string) is accepted too.
    const listed = (await api(gw, 'GET', `/v1/prompts/partials/${p.id}/versions`)).body.find((v: any) => v.string === 'second');
    expect(listed.version).toBe('2');
    expect((await api(gw, 'PUT', `/v1/prompts/partials/${p.id}/makeDefault`, { body: { version: listed.version } })).status).toBe(200);
    expect((await api(gw, 'GET', `/v1/prompts/partials/${p.id}`)).body).toMatchObject({ string: 'second', version: 2 });
    expect((await api(gw, 'PUT', `/v1/prompts/partials/${p.id}/makeDefault`, { body: { version: 1 } })).status).toBe(200);

    expectError(await api(gw, 'PUT', `/v1/prompts/partials/${p.id}/makeDefault`, { body: { version: 3 } }), 404, { type: 'not_found_error', param: 'version' });
    expectError(await api(gw, 'PUT', `/v1/prompts/partials/${RANDOM_UUID}/makeDefault`, { body: { version: 1 } }), 404, {
      type: 'not_found_error',
      param: null,
    });
    for (const body of [{}, { version: 'two' }, { version: '1.5' }, { version: '' }, { version: 1.5 }, { version: 0 }, { version: -1 }, { version: null }]) {
      expectError(await api(gw, 'PUT', `/v1/prompts/partials/${p.id}/makeDefault`, { body }), 400, { type: 'invalid_request_error', param: 'version' });
    }
    expectError(await api(gw, 'PUT', `/v1/prompts/partials/${p.id}/makeDefault`, { body: { version: 1, extra: true } }), 400, {
      type: 'invalid_request_error',
      param: 'extra',
    });
    expect((await api(gw, 'GET', `/v1/prompts/partials/${p.id}`)).body.version).toBe(1);
  });

  it('archived partials are still readable but listed only when asked', async () => {
    const p = await createPartial({ name: 'To archive', string: 'old' });
    const before = (await api(gw, 'GET', `/v1/prompts/partials/${p.id}/versions`)).body.length;
    expect((await api(gw, 'PUT', `/v1/prompts/partials/${p.id}`, { body: { status: 'archived' } })).status).toBe(200);
    expect((await api(gw, 'GET', `/v1/prompts/partials/${p.id}/versions`)).body.length).toBe(before);

    expect((await api(gw, 'GET', `/v1/prompts/partials/${p.id}`)).body).toMatchObject({ id: p.id, status: 'archived' });
    expect((await api(gw, 'GET', '/v1/prompts/partials/to-archive')).status).toBe(200);
    expect((await api(gw, 'GET', '/v1/prompts/partials')).body.map((s: any) => s.id)).not.toContain(p.id);
    expect((await api(gw, 'GET', '/v1/prompts/partials?status=active')).body.map((s: any) => s.id)).not.toContain(p.id);
    const archived = (await api(gw, 'GET', '/v1/prompts/partials?status=archived')).body;
    expect(archived.map((s: any) => s.id)).toEqual([p.id]);
    expect(archived[0].status).toBe('archived');
    expectError(await api(gw, 'GET', '/v1/prompts/partials?status=deleted'), 400, { type: 'invalid_request_error', param: 'status' });

    expect((await api(gw, 'PUT', `/v1/prompts/partials/${p.id}`, { body: { status: 'active' } })).status).toBe(200);
    expect((await api(gw, 'GET', '/v1/prompts/partials')).body.map((s: any) => s.id)).toContain(p.id);
  });

  it('deletes a partial with its versions', async () => {
    const p = await createPartial({ name: 'Doomed', string: 'bye' });
    await api(gw, 'PUT', `/v1/prompts/partials/${p.id}`, { body: { string: 'bye 2' } });
    await api(gw, 'PUT', `/v1/prompts/partials/${p.id}/makeDefault`, { body: { version: 2 } });
    const res = await api(gw, 'DELETE', '/v1/prompts/partials/doomed');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({});
    expectError(await api(gw, 'GET', `/v1/prompts/partials/${p.id}`), 404, { type: 'not_found_error', param: null });
    expectError(await api(gw, 'GET', `/v1/prompts/partials/${p.id}/versions`), 404, { type: 'not_found_error', param: null });
    expectError(await api(gw, 'DELETE', `/v1/prompts/partials/${p.id}`), 404, { type: 'not_found_error', param: null });
    expectError(await api(gw, 'PUT', `/v1/prompts/partials/${p.id}`, { body: { name: 'back' } }), 404, { type: 'not_found_error', param: null });
    expect((await api(gw, 'GET', '/v1/prompts/partials')).body.map((s: any) => s.id)).not.toContain(p.id);
    // The slug is free again.
    expect((await createPartial({ name: 'Doomed', string: 'again' })).slug).toBe('doomed');
  });

  it('20 parallel updates give versions 2..21 with no gap or duplicate', async () => {
    const p = await createPartial({ name: 'Contended', string: 'v1' });
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => api(gw, 'PUT', `/v1/prompts/partials/${p.id}`, { body: { string: `parallel ${i}` } })),
    );
    for (const res of results) expect(res.status).toBe(200);
    const ids = results.map((r) => r.body.prompt_partial_version_id);
    expect(new Set(ids).size).toBe(20);

    const versions = (await api(gw, 'GET', `/v1/prompts/partials/${p.id}/versions`)).body;
    expect(versions.map((v: any) => v.version)).toEqual(Array.from({ length: 21 }, (_, i) => String(21 - i)));
    expect(new Set(versions.slice(0, 20).map((v: any) => v.prompt_partial_version_id))).toEqual(new Set(ids));
    expect(new Set(versions.slice(0, 20).map((v: any) => v.string))).toEqual(new Set(Array.from({ length: 20 }, (_, i) => `parallel ${i}`)));
  });

  it('accepts a string of 100 000 characters and refuses one beyond', async () => {
    const exact = await api(gw, 'POST', '/v1/prompts/partials', { body: { name: 'Long', string: 'x'.repeat(100_000) } });
    expect(exact.status).toBe(200);
    expect((await api(gw, 'GET', `/v1/prompts/partials/${exact.body.id}`)).body.string).toHaveLength(100_000);
    // Characters, not UTF-16 units: 100 000 emoji are accepted.
    expect((await api(gw, 'POST', '/v1/prompts/partials', { body: { name: 'Emoji', string: '🙂'.repeat(100_000) } })).status).toBe(200);

    expectError(await api(gw, 'POST', '/v1/prompts/partials', { body: { name: 'Too long', string: 'x'.repeat(100_001) } }), 400, {
      type: 'invalid_request_error',
      param: 'string',
    });
    expectError(await api(gw, 'PUT', `/v1/prompts/partials/${exact.body.id}`, { body: { string: 'y'.repeat(100_001) } }), 400, {
      type: 'invalid_request_error',
      param: 'string',
    });
    expect((await api(gw, 'GET', `/v1/prompts/partials/${exact.body.id}/versions`)).body).toHaveLength(1);
    expect((await api(gw, 'GET', '/v1/prompts/partials')).body.map((p: any) => p.name)).not.toContain('Too long');
  });

  it('answers bad input with 400 in the error shape and writes nothing', async () => {
    const before = (await api(gw, 'GET', '/v1/prompts/partials?status=active')).body.length;
    const post = (body: unknown) => api(gw, 'POST', '/v1/prompts/partials', { body });
    expectError(await post({ string: 'x' }), 400, { type: 'invalid_request_error', param: 'name' });
    expectError(await post({ name: 'x' }), 400, { type: 'invalid_request_error', param: 'string' });
    expectError(await post({ name: '   ', string: 'x' }), 400, { type: 'invalid_request_error', param: 'name' });
    expectError(await post({ name: 'x', string: '' }), 400, { type: 'invalid_request_error', param: 'string' });
    expectError(await post({ name: 7, string: 'x' }), 400, { type: 'invalid_request_error', param: 'name' });
    expectError(await post({ name: 'x', string: ['x'] }), 400, { type: 'invalid_request_error', param: 'string' });
    expectError(await post({ name: 'x', string: 'x', version_description: 5 }), 400, { type: 'invalid_request_error', param: 'version_description' });
    expectError(await post({ name: 'x', string: 'x', id: RANDOM_UUID }), 400, { type: 'invalid_request_error', param: 'id' });
    expectError(await post({ name: 'x', string: 'x', slug: 'chosen' }), 400, { type: 'invalid_request_error', param: 'slug' });
    expectError(await post({ name: 'x', string: 'x', status: 'archived' }), 400, { type: 'invalid_request_error', param: 'status' });
    expectError(await post({ name: 'x', string: 'x', versionDescription: 'camel' }), 400, { type: 'invalid_request_error', param: 'versionDescription' });
    expectError(await post({ name: 'x', string: 'x', workspace_id: 42 }), 400, { type: 'invalid_request_error', param: 'workspace_id' });
    await expectNonObjectBodiesRefused(gw, '/v1/prompts/partials');
    expectError(await api(gw, 'GET', '/v1/prompts/partials?sort=name'), 400, { type: 'invalid_request_error', param: 'sort' });

    const p = await createPartial({ name: 'Strict update', string: 'x' });
    const put = (body: unknown) => api(gw, 'PUT', `/v1/prompts/partials/${p.id}`, { body });
    expectError(await put({ status: 'deleted' }), 400, { type: 'invalid_request_error', param: 'status' });
    expectError(await put({ name: '' }), 400, { type: 'invalid_request_error', param: 'name' });
    expectError(await put({ slug: 'mine' }), 400, { type: 'invalid_request_error', param: 'slug' });
    expectError(await put({ version: 3 }), 400, { type: 'invalid_request_error', param: 'version' });
    // A refused update changes nothing, not even with valid fields beside the bad one.
    expectError(await put({ name: 'Renamed', string: 'new text', status: 'gone' }), 400, { type: 'invalid_request_error', param: 'status' });
    expect((await api(gw, 'GET', `/v1/prompts/partials/${p.id}`)).body).toMatchObject({ name: 'Strict update', string: 'x', version: 1 });
    expect((await api(gw, 'GET', `/v1/prompts/partials/${p.id}/versions`)).body).toHaveLength(1);
    expect((await api(gw, 'GET', '/v1/prompts/partials?status=active')).body.length).toBe(before + 1);
  });

  it('answers unknown ids and slugs with 404', async () => {
    for (const ref of [RANDOM_UUID, 'no-such-slug', 'Not%20A%20Slug']) {
      expectError(await api(gw, 'GET', `/v1/prompts/partials/${ref}`), 404, { type: 'not_found_error', param: null });
      expectError(await api(gw, 'GET', `/v1/prompts/partials/${ref}/versions`), 404, { type: 'not_found_error', param: null });
      expectError(await api(gw, 'PUT', `/v1/prompts/partials/${ref}`, { body: { name: 'x' } }), 404, { type: 'not_found_error', param: null });
      expectError(await api(gw, 'DELETE', `/v1/prompts/partials/${ref}`), 404, { type: 'not_found_error', param: null });
    }
  });

  it("another workspace's or organisation's partial answers exactly like a missing one", async () => {
    const other = await createOrganisation(gw, 'Partials other org');
    const theirs = await createPartial({ name: 'Secret sauce', string: 'their text' }, other);
    const missing = await api(gw, 'GET', `/v1/prompts/partials/${RANDOM_UUID}`);
    const foreign = await api(gw, 'GET', `/v1/prompts/partials/${theirs.id}`);
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.message.replace(theirs.id, 'ID')).toBe(missing.body.error.message.replace(RANDOM_UUID, 'ID'));
    expectError(await api(gw, 'GET', '/v1/prompts/partials/secret-sauce'), 404, { type: 'not_found_error', param: null });
    expectError(await api(gw, 'GET', `/v1/prompts/partials/${theirs.id}/versions`), 404, { type: 'not_found_error', param: null });
    expectError(await api(gw, 'PUT', `/v1/prompts/partials/${theirs.id}`, { body: { string: 'mine now' } }), 404, { type: 'not_found_error', param: null });
    expectError(await api(gw, 'PUT', `/v1/prompts/partials/${theirs.id}/makeDefault`, { body: { version: 1 } }), 404, { type: 'not_found_error', param: null });
    expectError(await api(gw, 'DELETE', `/v1/prompts/partials/${theirs.id}`), 404, { type: 'not_found_error', param: null });
    expect((await api(gw, 'GET', '/v1/prompts/partials')).body.map((s: any) => s.id)).not.toContain(theirs.id);
    const theirCollection = (await api(other, 'GET', `/v1/prompts/partials/${theirs.id}`)).body.collection_id;
    expectError(await api(gw, 'GET', `/v1/prompts/partials?collection_id=${theirCollection}`), 404, { type: 'not_found_error', param: 'collection_id' });
    expectError(await api(gw, 'POST', '/v1/prompts/partials', { body: { name: 'x', string: 'x', collection_id: theirCollection } }), 404, {
      type: 'not_found_error',
      param: 'collection_id',
    });
    expect((await api(other, 'GET', `/v1/prompts/partials/${theirs.id}`)).body).toMatchObject({ string: 'their text', version: 1 });

    // Another workspace of the same organisation: its own default collection, its own slugs.
    const ws = await api(gw, 'POST', '/v1/admin/workspaces', { body: { name: 'Partials B', slug: 'partials-b' } });
    expect(ws.status).toBe(200);
    const inB = await createPartial({ name: 'Support Tone', string: 'B text', workspace_id: 'partials-b' });
    expect(inB.slug).toBe('support-tone');
    expectError(await api(gw, 'GET', `/v1/prompts/partials/${inB.id}`), 404, { type: 'not_found_error', param: null });
    const readInB = await api(gw, 'GET', `/v1/prompts/partials/support-tone?workspace_id=partials-b`);
    expect(readInB.body).toMatchObject({ id: inB.id, string: 'B text' });
    const defaultCollection = (await api(gw, 'GET', '/v1/prompts/partials/support-tone')).body.collection_id;
    expect(readInB.body.collection_id).not.toBe(defaultCollection);
    expect((await api(gw, 'GET', '/v1/prompts/partials?workspace_id=partials-b')).body.map((s: any) => s.id)).toEqual([inB.id]);

    const wsKey = (await api(gw, 'POST', '/v1/api-keys', { body: { name: 'partials b key', workspace_id: 'partials-b' } })).body.key;
    const asB = { url: gw.url, key: wsKey };
    expect((await api(asB, 'GET', '/v1/prompts/partials/support-tone')).body.id).toBe(inB.id);
    expectError(await api(asB, 'GET', '/v1/prompts/partials?workspace_id=default'), 403, { type: 'permission_error', param: null });
  });

  it('needs an API key', async () => {
    expectError(await api(gw, 'GET', '/v1/prompts/partials', { key: null }), 401, { type: 'authentication_error', param: null });
  });
});
