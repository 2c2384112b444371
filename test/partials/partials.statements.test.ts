import { api, gql, startTestGateway, stopBackgroundWork, type TestGateway } from '../support/gateway';

/**
 * `versions`, `defaultVersion` and `collection` are loaded through per-request DataLoaders, so listing
 * partials with them costs the same few SQL statements for 10 partials as for 100.
 */
let gw: TestGateway;
let statements: string[] = [];
beforeAll(async () => {
  // Listing every partial with all its versions is estimated at 100 × (1 + 100 + 2) by the GraphQL
  // cost limit (lists without a page size count as 100 items): above the default limit of 10 000.
  gw = await startTestGateway({ GATEWAY_GRAPHQL_MAX_COST: '100000' }, { onQuery: (sql) => statements.push(sql) });
  // Background polling and pruning would show up in the statement count.
  await stopBackgroundWork(gw);
});
afterAll(() => gw.stop());

const LIST = `{ promptPartials {
  id slug name
  versions { id version string }
  defaultVersion { id version string }
  collection { id slug }
} }`;

/** Partials `from` … `to - 1`, ten at a time (the count below depends on which exist, not on their order). */
async function createPartials(from: number, to: number) {
  for (let start = from; start < to; start += 10) {
    await Promise.all(Array.from({ length: Math.min(10, to - start) }, (_, n) => createPartial(start + n)));
  }
}

async function createPartial(i: number) {
  const created = await api(gw, 'POST', '/v1/prompts/partials', { body: { name: `Counted ${i}`, string: `text ${i}` } });
  expect(created.status).toBe(200);
  // Every other partial gets a second version, published on every fourth.
  if (i % 2 === 0) expect((await api(gw, 'PUT', `/v1/prompts/partials/${created.body.id}`, { body: { string: `text ${i} v2` } })).status).toBe(200);
  if (i % 4 === 0) expect((await api(gw, 'PUT', `/v1/prompts/partials/${created.body.id}/makeDefault`, { body: { version: 2 } })).status).toBe(200);
}

async function countListStatements(expected: number): Promise<number> {
  statements = [];
  const res = await gql(gw, LIST);
  const count = statements.length;
  expect(res.body.errors).toBeUndefined();
  const partials = res.body.data.promptPartials;
  expect(partials).toHaveLength(expected);
  for (const p of partials) {
    const i = Number(p.name.split(' ')[1]);
    expect(p.versions.map((v: any) => v.version)).toEqual(i % 2 === 0 ? [2, 1] : [1]);
    expect(p.defaultVersion.version).toBe(i % 4 === 0 ? 2 : 1);
    expect(p.collection.slug).toBe('default');
  }
  return count;
}

describe('GraphQL statement count for partials with their versions', () => {
  it('is a small constant, the same for 10 and for 100 partials', async () => {
    await createPartials(0, 10);
    const forTen = await countListStatements(10);
    await createPartials(10, 100);
    const forHundred = await countListStatements(100);

    expect(forHundred).toBe(forTen);
    // API key, scope, partials, versions, default versions, collections (and nothing per partial).
    expect(forHundred).toBeLessThanOrEqual(8);
    expect(statements.filter((sql) => /prompt_partial_versions/.test(sql))).toHaveLength(2);
  });
});
