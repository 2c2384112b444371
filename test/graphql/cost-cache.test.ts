import { gql, startTestGateway, type TestGateway } from '../support/gateway';

/**
 * The cost limit is computed once per query text and sizing (cost cache in src/graphql/limits.ts):
 * the same document sent again with other variables is costed for those variables, never answered
 * from a cheaper or a failed earlier computation.
 */
let gw: TestGateway;
beforeAll(async () => {
  // labels(pageSize: n) { items { id } } costs 1 + n: 6 for 5, 51 for 50.
  gw = await startTestGateway({ GATEWAY_GRAPHQL_MAX_COST: '20' });
});
afterAll(() => gw.stop());

const QUERY = `query Sized($n: Int, $s: String) { labels(pageSize: $n, search: $s) { items { id } } }`;
const send = (variables: Record<string, unknown>) => gql(gw, QUERY, variables);
const accepted = (res: { body: { errors?: unknown; data?: unknown } }) => {
  expect(res.body.errors).toBeUndefined();
  expect(res.body.data).toEqual({ labels: { items: expect.any(Array) } });
};
const refused = (res: { status: number; body: { errors: { extensions: unknown }[] } }, cost: number) => {
  expect(res.status).toBe(400);
  expect(res.body.errors[0].extensions).toMatchObject({ code: 'QUERY_TOO_COMPLEX', cost, maxCost: 20 });
};

describe('GraphQL cost cache', () => {
  it('costs a repeated document for each sizing, whatever its string variables', async () => {
    for (let i = 0; i < 2; i++) accepted(await send({ n: 5, s: 'a' }));
    refused(await send({ n: 50, s: 'a' }), 51);
    accepted(await send({ n: 5, s: 'another search' }));
    refused(await send({ n: 50, s: 'yet another' }), 51);
    accepted(await send({ n: 19, s: null }));
    refused(await send({ n: 20, s: null }), 21);
  });

  it('does not let a variable that failed coercion stand for valid ones of the same shape', async () => {
    const bad = await send({ n: 'not a number', s: 'x' });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    refused(await send({ n: 50, s: 'x' }), 51);
  });

  it('marks every answer uncacheable, as Apollo’s cache-control plugin did', async () => {
    const ok = await send({ n: 1 });
    expect(ok.headers.get('cache-control')).toBe('no-store');
    const failed = await send({ n: 50 });
    expect(failed.status).toBe(400);
    expect(failed.headers.get('cache-control')).toBe('no-store');
  });
});
