import { api, createOrganisation, gql, useTestGateway } from '../support/gateway';

const gw = useTestGateway();

const RANDOM_UUID = '3f9a1c52-8d0e-4b7a-9c61-2a5e8f7d4b10';
const VERSION_FIELDS = 'id partialId version string description status createdAt';
const PARTIAL_FIELDS = `id slug name collectionId status createdAt lastUpdatedAt
  defaultVersion { ${VERSION_FIELDS} } versions { ${VERSION_FIELDS} } collection { id name slug isDefault }`;

const CREATE = `mutation($input: CreatePromptPartialInput!) { createPromptPartial(input: $input) { ${PARTIAL_FIELDS} } }`;

async function create(input: Record<string, unknown>, as: { url: string; key: string } = gw) {
  const res = await gql(as, CREATE, { input });
  expect(res.body.errors).toBeUndefined();
  return res.body.data.createPromptPartial;
}

describe('prompt partials over GraphQL', () => {
  it('creates a partial with version 1 as its default, in the default collection', async () => {
    const partial = await create({ name: 'GQL Greeting', string: 'Hello {{name}}', versionDescription: 'v1' });
    expect(partial).toMatchObject({ slug: 'gql-greeting', name: 'GQL Greeting', status: 'active' });
    expect(partial.defaultVersion).toMatchObject({ partialId: partial.id, version: 1, string: 'Hello {{name}}', description: 'v1', status: 'active' });
    expect(partial.versions).toEqual([partial.defaultVersion]);
    expect(partial.collection).toMatchObject({ id: partial.collectionId, slug: 'default', isDefault: true });

    // The REST face sees the same partial.
    const rest = await api(gw, 'GET', `/v1/prompts/partials/${partial.id}`);
    expect(rest.body).toMatchObject({
      id: partial.id,
      slug: 'gql-greeting',
      prompt_partial_version_id: partial.defaultVersion.id,
      created_at: partial.createdAt,
    });
  });

  it('reads by id or slug and lists with a collection and status filter', async () => {
    const partial = await create({ name: 'GQL Lookup', string: 'text' });
    for (const ref of [partial.id, 'gql-lookup']) {
      const res = await gql(gw, `query($ref: String!) { promptPartial(idOrSlug: $ref) { id slug defaultVersion { string } } }`, { ref });
      expect(res.body.data.promptPartial).toEqual({ id: partial.id, slug: 'gql-lookup', defaultVersion: { string: 'text' } });
    }
    const list = await gql(gw, `query($c: ID) { promptPartials(collectionId: $c) { id } }`, { c: partial.collectionId });
    expect(list.body.data.promptPartials.map((p: any) => p.id)).toContain(partial.id);
    const missing = await gql(gw, `query($c: ID) { promptPartials(collectionId: $c) { id } }`, { c: RANDOM_UUID });
    expect(missing.body.errors[0].extensions).toMatchObject({ code: 'NOT_FOUND', param: 'collectionId' });

    await gql(gw, `mutation($ref: String!) { updatePromptPartial(idOrSlug: $ref, input: {status: "archived"}) { status } }`, { ref: partial.id });
    expect((await gql(gw, `{ promptPartials { id } }`)).body.data.promptPartials.map((p: any) => p.id)).not.toContain(partial.id);
    const archived = await gql(gw, `{ promptPartials(status: "archived") { id status } }`);
    expect(archived.body.data.promptPartials).toEqual([{ id: partial.id, status: 'archived' }]);
    expect((await gql(gw, `{ promptPartial(idOrSlug: "gql-lookup") { status } }`)).body.data.promptPartial.status).toBe('archived');
    const bad = await gql(gw, `{ promptPartials(status: "gone") { id } }`);
    expect(bad.body.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', param: 'status' });
  });

  it('updates, publishes another version and deletes', async () => {
    const partial = await create({ name: 'GQL Versions', string: 'one' });
    const update = `mutation($ref: String!, $input: UpdatePromptPartialInput!) {
      updatePromptPartial(idOrSlug: $ref, input: $input) { name slug defaultVersion { version } versions { version string description } } }`;
    const updated = await gql(gw, update, { ref: partial.id, input: { string: 'two', description: 'second', name: 'GQL Versions renamed' } });
    expect(updated.body.errors).toBeUndefined();
    expect(updated.body.data.updatePromptPartial).toEqual({
      name: 'GQL Versions renamed',
      slug: 'gql-versions',
      defaultVersion: { version: 1 },
      versions: [
        { version: 2, string: 'two', description: 'second' },
        { version: 1, string: 'one', description: '' },
      ],
    });
    const unchanged = await gql(gw, update, { ref: 'gql-versions', input: { string: 'two', name: 'Again' } });
    expect(unchanged.body.data.updatePromptPartial.versions).toHaveLength(2);

    const make = `mutation($ref: String!, $v: Int!) { makePromptPartialVersionDefault(idOrSlug: $ref, version: $v) { defaultVersion { version string } } }`;
    const made = await gql(gw, make, { ref: 'gql-versions', v: 2 });
    expect(made.body.data.makePromptPartialVersionDefault.defaultVersion).toEqual({ version: 2, string: 'two' });
    expect((await api(gw, 'GET', `/v1/prompts/partials/${partial.id}`)).body).toMatchObject({ version: 2, string: 'two' });
    const none = await gql(gw, make, { ref: partial.id, v: 9 });
    expect(none.body.errors[0].extensions).toMatchObject({ code: 'NOT_FOUND', param: 'version' });

    const deleted = await gql(gw, `mutation($ref: String!) { deletePromptPartial(idOrSlug: $ref) }`, { ref: 'gql-versions' });
    expect(deleted.body.data.deletePromptPartial).toBe(true);
    const gone = await gql(gw, `query($ref: String!) { promptPartial(idOrSlug: $ref) { id } }`, { ref: partial.id });
    expect(gone.body.errors[0].extensions.code).toBe('NOT_FOUND');
  });

  it('resolves partials, versions and collections as federation entities, in the caller scope only', async () => {
    const mine = await create({ name: 'GQL Entity', string: 'entity text' });
    const other = await createOrganisation(gw, 'GraphQL entity other org');
    const theirs = await create({ name: 'GQL Entity', string: 'theirs' }, other);
    const query = `query($reps: [_Any!]!) { _entities(representations: $reps) {
      ... on PromptPartial { id slug defaultVersion { version string } }
      ... on PromptPartialVersion { id version string }
      ... on Collection { id isDefault } } }`;
    const res = await gql(gw, query, {
      reps: [
        { __typename: 'PromptPartial', id: mine.id },
        { __typename: 'PromptPartialVersion', id: mine.defaultVersion.id },
        { __typename: 'Collection', id: mine.collectionId },
        { __typename: 'PromptPartial', id: theirs.id },
        { __typename: 'PromptPartialVersion', id: theirs.defaultVersion.id },
        { __typename: 'Collection', id: theirs.collectionId },
        { __typename: 'PromptPartial', id: 'not-a-uuid' },
      ],
    });
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data._entities).toEqual([
      { id: mine.id, slug: 'gql-entity', defaultVersion: { version: 1, string: 'entity text' } },
      { id: mine.defaultVersion.id, version: 1, string: 'entity text' },
      { id: mine.collectionId, isDefault: true },
      null,
      null,
      null,
      null,
    ]);
  });

  it('maps bad input and foreign partials to extension codes', async () => {
    const tooLong = await gql(gw, CREATE, { input: { name: 'Long', string: 'x'.repeat(100_001) } });
    expect(tooLong.body.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', param: 'string' });
    const emptyName = await gql(gw, CREATE, { input: { name: '', string: 'x' } });
    expect(emptyName.body.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', param: 'name' });
    const badCollection = await gql(gw, CREATE, { input: { name: 'x', string: 'x', collectionId: 'nope' } });
    expect(badCollection.body.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', param: 'collectionId' });

    const other = await createOrganisation(gw, 'GraphQL partials other org');
    const theirs = await create({ name: 'Their partial', string: 'secret' }, other);
    for (const ref of [theirs.id, theirs.slug]) {
      expect((await gql(gw, `query($ref: String!) { promptPartial(idOrSlug: $ref) { id } }`, { ref })).body.errors[0].extensions.code).toBe('NOT_FOUND');
    }
    const update = await gql(gw, `mutation($ref: String!) { updatePromptPartial(idOrSlug: $ref, input: {string: "mine"}) { id } }`, { ref: theirs.id });
    expect(update.body.errors[0].extensions.code).toBe('NOT_FOUND');
    const remove = await gql(gw, `mutation($ref: String!) { deletePromptPartial(idOrSlug: $ref) }`, { ref: theirs.id });
    expect(remove.body.errors[0].extensions.code).toBe('NOT_FOUND');
    expect((await gql(gw, `{ promptPartials { id } }`)).body.data.promptPartials.map((p: any) => p.id)).not.toContain(theirs.id);
  });
});
