import { CreateLabelDocument, DeleteLabelDocument, LabelDocument, LabelsDocument, UpdateLabelDocument } from '../graphql/generated/operations';
import { api, createOrganisation, gql, useTestGateway } from '../support/gateway';
import { data, run } from '../support/graphql';

const gw = useTestGateway();

const RANDOM_UUID = '3f9a1c52-8d0e-4b7a-9c61-2a5e8f7d4b10';

describe('labels over GraphQL', () => {
  it('lists the default labels with a total', async () => {
    const { labels } = await data(gw, LabelsDocument, {});
    expect(labels.total).toBe(3);
    expect(labels.items.every((l) => l.isUniversal)).toBe(true);
  });

  it('creates, reads, updates and deletes through the same service as REST', async () => {
    const created = await run(gw, CreateLabelDocument, { input: { name: 'gql-label', description: 'from GraphQL', colorCode: '#123456' } });
    expect(created.status).toBe(200);
    expect(created.body.errors).toBeUndefined();
    const label = created.body.data!.createLabel;
    expect(label).toMatchObject({ name: 'gql-label', description: 'from GraphQL', colorCode: '#123456', isUniversal: false, status: 'active' });

    // The REST face sees the same object.
    const rest = await api(gw, 'GET', `/v1/labels/${label.id}`);
    expect(rest.body).toMatchObject({ id: label.id, name: 'gql-label', color_code: '#123456', created_at: label.createdAt });

    const updated = await data(gw, UpdateLabelDocument, { id: label.id, input: { name: 'gql-renamed' } });
    expect(updated.updateLabel).toMatchObject({ name: 'gql-renamed', description: 'from GraphQL' });

    const read = await data(gw, LabelDocument, { id: label.id });
    expect(read.label.name).toBe('gql-renamed');

    expect((await data(gw, DeleteLabelDocument, { id: label.id })).deleteLabel).toBe(true);
    const gone = await run(gw, LabelDocument, { id: label.id });
    expect(gone.body.errors?.[0].extensions?.code).toBe('NOT_FOUND');
  });

  it('pages and searches', async () => {
    for (const name of ['gp-a', 'gp-b', 'gp-c']) await data(gw, CreateLabelDocument, { input: { name } });
    const { labels } = await data(gw, LabelsDocument, { search: 'gp-', page: 1, pageSize: 2 });
    expect({ total: labels.total, names: labels.items.map((l) => l.name) }).toEqual({ total: 3, names: ['gp-c'] });
    const bad = await run(gw, LabelsDocument, { pageSize: 0 });
    expect(bad.body.errors?.[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', param: 'pageSize' });
  });

  it('searches for % and _ literally', async () => {
    await data(gw, CreateLabelDocument, { input: { name: 'gq_under' } });
    expect((await data(gw, LabelsDocument, { search: '%', pageSize: 100 })).labels.total).toBe(0);
    const { labels } = await data(gw, LabelsDocument, { search: 'q_u', pageSize: 100 });
    expect(labels.items.map((l) => l.name)).toEqual(['gq_under']);
  });

  it('maps domain errors to extension codes', async () => {
    const dup = await gql(gw, `mutation { createLabel(input: {name: "production"}) { id } }`);
    expect(dup.body.errors[0].extensions.code).toBe('CONFLICT');
    const invalid = await gql(gw, `mutation { createLabel(input: {name: "latest"}) { id } }`);
    expect(invalid.body.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', param: 'name' });
    const missing = await gql(gw, `{ label(id: "${RANDOM_UUID}") { id } }`);
    expect(missing.body.errors[0].extensions.code).toBe('NOT_FOUND');
    const malformed = await gql(gw, `{ label(id: "not-a-uuid") { id } }`);
    expect(malformed.body.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', param: 'id' });
    const production = (await gql(gw, `{ labels(search: "production") { items { id } } }`)).body.data.labels.items[0];
    const protectedDelete = await gql(gw, `mutation { deleteLabel(id: "${production.id}") }`);
    expect(protectedDelete.body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
  });

  it('refuses a missing or unknown key with UNAUTHENTICATED and HTTP 401', async () => {
    for (const key of [null, 'gw_nope']) {
      const res = await gql(gw, `{ labels { total } }`, {}, { key });
      expect(res.status).toBe(401);
      expect(res.body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
      expect(res.body.data).toBeUndefined();
    }
  });

  it("does not show another organisation's label", async () => {
    const other = await createOrganisation(gw, 'GraphQL other org');
    const theirs = (await gql(other, `mutation { createLabel(input: {name: "theirs"}) { id } }`)).body.data.createLabel.id;
    const res = await gql(gw, `{ label(id: "${theirs}") { name } }`);
    expect(res.body.errors[0].extensions.code).toBe('NOT_FOUND');
    const update = await gql(gw, `mutation { updateLabel(id: "${theirs}", input: {description: "x"}) { id } }`);
    expect(update.body.errors[0].extensions.code).toBe('NOT_FOUND');
  });

  it('answers malformed queries and wrong variable types as client errors, never 500', async () => {
    const parse = await gql(gw, `{ labels { total `);
    expect(parse.status).toBe(400);
    expect(parse.body.errors[0].extensions.code).toBe('GRAPHQL_PARSE_FAILED');
    const unknown = await gql(gw, `{ labels { nope } }`);
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    const variables = await gql(gw, `query($p: Int) { labels(pageSize: $p) { total } }`, { p: 'many' });
    expect(variables.status).toBe(400);
    expect(variables.body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
  });

  it('refuses cross-site simple requests (CSRF prevention)', async () => {
    const res = await fetch(`${gw.url}/graphql?query=${encodeURIComponent('{ labels { total } }')}`, {
      headers: { 'x-gateway-api-key': gw.key },
    });
    expect(res.status).toBe(400);
  });
});
