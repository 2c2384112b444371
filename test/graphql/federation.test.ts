import { composeServices } from '@apollo/composition';
import { ApolloGateway, RemoteGraphQLDataSource } from '@apollo/gateway';
import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginInlineTraceDisabled } from '@apollo/server/plugin/disabled';
import { startStandaloneServer } from '@apollo/server/standalone';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { getNamedType, getNullableType, isObjectType, parse } from 'graphql';
import { FEDERATION_LINK } from '../../src/graphql/federation';
import { buildGatewaySchema } from '../../src/graphql/schema';
import { GRAPHQL_MODULES } from '../../src/modules/graphql-modules';
import { CreateLabelDocument, LabelsDocument } from './generated/operations';
import { data } from '../support/graphql';
import { createOrganisation, gql, startTestGateway, type TestGateway } from '../support/gateway';

/**
 * Object types that have an `id` but are not federation entities, each with the reason. Every other
 * object type with an `id: ID!` field must be registered with `registerEntity` (src/graphql/entity.ts).
 */
const NOT_ENTITIES: Record<string, string> = {
  ChatCompletion: 'a one-off answer: the gateway stores none, so there is nothing to look up by id',
  LogEntry: 'a row of the request log, read in pages by time: a router has no reason to resolve one by reference',
};

const API_KEY_HEADER = 'x-gateway-api-key';
// @apollo/gateway otherwise reports usage metrics to Apollo (and probes cloud metadata servers).
process.env.APOLLO_TELEMETRY_DISABLED = 'true';
const RANDOM_UUID = '3f9a1c52-8d0e-4b7a-9c61-2a5e8f7d4b10';

/** A second subgraph: deployments that point at labels of the gateway subgraph, and labels' deployments. */
const DEPLOYMENTS_SDL = `${FEDERATION_LINK}
  type Deployment @key(fields: "id") {
    id: ID!
    name: String!
    label: Label
  }
  type Label @key(fields: "id") {
    id: ID!
    deployments: [Deployment!]!
  }
  type Query {
    deployments: [Deployment!]!
  }
`;

interface Deployment {
  id: string;
  name: string;
  labelId: string;
}

async function startDeploymentsSubgraph(deployments: Deployment[]) {
  const keysSeen: (string | undefined)[] = [];
  const server = new ApolloServer<{ apiKey?: string }>({
    plugins: [ApolloServerPluginInlineTraceDisabled()],
    schema: buildSubgraphSchema({
      typeDefs: parse(DEPLOYMENTS_SDL),
      resolvers: {
        Query: { deployments: () => deployments },
        Deployment: {
          label: (d: Deployment) => ({ __typename: 'Label', id: d.labelId }),
        },
        Label: {
          __resolveReference: (ref: { id: string }) => ({ id: ref.id }),
          deployments: (label: { id: string }) => deployments.filter((d) => d.labelId === label.id),
        },
      },
    }),
  });
  const { url } = await startStandaloneServer(server, {
    listen: { port: 0, host: '127.0.0.1' },
    context: async ({ req }) => {
      const apiKey = req.headers[API_KEY_HEADER] as string | undefined;
      keysSeen.push(apiKey);
      return { apiKey };
    },
  });
  return { url, keysSeen, stop: () => server.stop() };
}

let gw: TestGateway;
let other: Awaited<ReturnType<typeof createOrganisation>>;
let labelStatements = 0;

beforeAll(async () => {
  gw = await startTestGateway({}, { onQuery: (sql) => (labelStatements += /"labels"/.test(sql) ? 1 : 0) });
  other = await createOrganisation(gw, 'Federation other org');
});
afterAll(() => gw.stop());

async function subgraphSdl(): Promise<string> {
  const res = await gql(gw, `{ _service { sdl } }`);
  expect(res.status).toBe(200);
  return res.body.data._service.sdl;
}

const ENTITIES = `query($representations: [_Any!]!) { _entities(representations: $representations) { ... on Label { id name } } }`;

describe('Federation v2 subgraph', () => {
  it('answers _service { sdl } with a Federation v2 SDL whose entities carry @key(fields: "id")', async () => {
    const sdl = await subgraphSdl();
    expect(sdl).toMatch(/@link\(url: "https:\/\/specs\.apollo\.dev\/federation\/v2\.\d+"/);
    expect(sdl).toMatch(/type Label\s+@key\(fields: "id"\)/);
  });

  it('marks every object type with an id as an entity (or exempts it with a reason)', async () => {
    const schema = await buildGatewaySchema(GRAPHQL_MODULES);
    const sdl = await subgraphSdl();
    const withIds = Object.values(schema.getTypeMap()).filter(
      (type) =>
        isObjectType(type) && !type.name.startsWith('__') && getNamedType(getNullableType(type.getFields().id?.type ?? null) ?? undefined)?.name === 'ID',
    );
    expect(withIds.length).toBeGreaterThan(0);
    for (const type of withIds) {
      if (NOT_ENTITIES[type.name]) continue;
      expect({ type: type.name, entity: new RegExp(`type ${type.name}\\s+@key\\(fields: "id"\\)`).test(sdl) }).toEqual({ type: type.name, entity: true });
    }
  });

  it('resolves _entities through the label service, batched, in the caller scope', async () => {
    const mine = await data(gw, CreateLabelDocument, { input: { name: 'fed-mine' } });
    const theirs = await data(other, CreateLabelDocument, { input: { name: 'fed-theirs' } });
    const before = labelStatements;
    const res = await gql(gw, ENTITIES, {
      representations: [
        { __typename: 'Label', id: mine.createLabel.id },
        { __typename: 'Label', id: theirs.createLabel.id },
        { __typename: 'Label', id: RANDOM_UUID },
        { __typename: 'Label', id: 'not-a-uuid' },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body.errors).toBeUndefined();
    // Another tenant's id, an unknown id and a malformed one resolve to null, never to data.
    expect(res.body.data._entities).toEqual([{ id: mine.createLabel.id, name: 'fed-mine' }, null, null, null]);
    // One DataLoader batch: a single label query for the four references.
    expect(labelStatements - before).toBe(1);
  });

  it('resolves unknown and malformed ids of every entity type to null (no errors)', async () => {
    const entityTypes = [...(await subgraphSdl()).matchAll(/type (\w+)\s+@key\(fields: "id"\)/g)].map((m) => m[1]);
    expect(entityTypes).toEqual(expect.arrayContaining(['Label']));
    for (const typename of entityTypes) {
      const res = await gql(gw, `query($r: [_Any!]!) { _entities(representations: $r) { __typename } }`, {
        r: [RANDOM_UUID, 'not-a-uuid', ''].map((id) => ({ __typename: typename, id })),
      });
      expect({ typename, status: res.status, errors: res.body.errors, data: res.body.data }).toEqual({
        typename,
        status: 200,
        errors: undefined,
        data: { _entities: [null, null, null] },
      });
    }
  });

  it('refuses a representation whose __typename is no entity type as BAD_USER_INPUT naming it (not an internal error)', async () => {
    const query = `query($r: [_Any!]!) { _entities(representations: $r) { __typename } }`;
    for (const [bad, index] of [
      [[{ __typename: 'NoSuchType', id: RANDOM_UUID }], 0],
      [
        [
          { __typename: 'Label', id: RANDOM_UUID },
          { __typename: 'Query', id: RANDOM_UUID },
        ],
        1,
      ],
      [[{ id: RANDOM_UUID }], 0],
    ] as const) {
      const res = await gql(gw, query, { r: bad });
      expect(res.body.errors).toEqual([
        expect.objectContaining({
          message: expect.stringMatching(new RegExp(`^representations\\.${index}\\.__typename: must name an entity type of this subgraph \\(.*Label.*\\)$`)),
          extensions: expect.objectContaining({ code: 'BAD_USER_INPUT', param: `representations.${index}.__typename`, errorCode: 'unknown_entity_type' }),
        }),
      ]);
    }
  });

  it("resolves another organisation's prompt partial to null", async () => {
    const create = `mutation($name: String!) { createPromptPartial(input: {name: $name, string: "Hello"}) { id } }`;
    const mine = (await gql(gw, create, { name: 'fed partial' })).body.data.createPromptPartial.id;
    const theirs = (await gql(other, create, { name: 'fed partial' })).body.data.createPromptPartial.id;
    const res = await gql(gw, `query($r: [_Any!]!) { _entities(representations: $r) { ... on PromptPartial { id name defaultVersion { version } } } }`, {
      r: [mine, theirs].map((id) => ({ __typename: 'PromptPartial', id })),
    });
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data._entities).toEqual([{ id: mine, name: 'fed partial', defaultVersion: { version: 1 } }, null]);
  });

  it('does not resolve entities without an API key', async () => {
    const res = await gql(gw, ENTITIES, { representations: [{ __typename: 'Label', id: RANDOM_UUID }] }, { key: null });
    expect(res.status).toBe(401);
    expect(res.body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
  });

  it('composes with a second subgraph (0 errors)', async () => {
    const result = composeServices([
      { name: 'gateway', url: `${gw.url}/graphql`, typeDefs: parse(await subgraphSdl()) },
      { name: 'deployments', url: 'http://deployments.invalid/graphql', typeDefs: parse(DEPLOYMENTS_SDL) },
    ]);
    expect(result.errors?.map((e) => e.message) ?? []).toEqual([]);
    expect(result.supergraphSdl).toContain('type Deployment');
  });

  describe('behind an Apollo gateway', () => {
    let deployments: Awaited<ReturnType<typeof startDeploymentsSubgraph>>;
    let router: ApolloServer<{ apiKey?: string }>;
    let routerUrl: string;
    const forwardedToGateway: (string | undefined)[] = [];

    beforeAll(async () => {
      const production = await data(gw, LabelsDocument, { search: 'production' });
      const theirs = await data(other, CreateLabelDocument, { input: { name: 'fed-router-theirs' } });
      deployments = await startDeploymentsSubgraph([
        { id: 'd1', name: 'api v1', labelId: production.labels.items[0].id },
        { id: 'd2', name: 'api v2', labelId: production.labels.items[0].id },
        { id: 'd3', name: 'not ours', labelId: theirs.createLabel.id },
      ]);
      const composed = composeServices([
        { name: 'gateway', url: `${gw.url}/graphql`, typeDefs: parse(await subgraphSdl()) },
        { name: 'deployments', url: deployments.url, typeDefs: parse(DEPLOYMENTS_SDL) },
      ]);
      if (!composed.supergraphSdl) throw new Error(`composition failed: ${composed.errors?.map((e) => e.message).join('; ')}`);
      const gateway = new ApolloGateway({
        supergraphSdl: composed.supergraphSdl,
        buildService: ({ url }) =>
          new RemoteGraphQLDataSource<{ apiKey?: string }>({
            url,
            willSendRequest({ request, context }) {
              if (url?.startsWith(gw.url)) forwardedToGateway.push(context.apiKey);
              if (context.apiKey) request.http?.headers.set(API_KEY_HEADER, context.apiKey);
            },
          }),
      });
      router = new ApolloServer<{ apiKey?: string }>({ gateway });
      ({ url: routerUrl } = await startStandaloneServer(router, {
        listen: { port: 0, host: '127.0.0.1' },
        context: async ({ req }) => ({ apiKey: req.headers[API_KEY_HEADER] as string | undefined }),
      }));
    });
    afterAll(async () => {
      await router?.stop();
      await deployments?.stop();
    });

    async function viaRouter(query: string, key: string | null = gw.key) {
      const res = await fetch(routerUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(key ? { [API_KEY_HEADER]: key } : {}) },
        body: JSON.stringify({ query }),
      });
      return { status: res.status, body: await res.json() };
    }

    it('answers a query that spans both subgraphs, forwarding the API key', async () => {
      const res = await viaRouter(`{ deployments { name label { name colorCode deployments { name } } } }`);
      expect(res.body.errors).toBeUndefined();
      expect(res.body.data.deployments).toEqual([
        { name: 'api v1', label: { name: 'production', colorCode: '#D92D20', deployments: [{ name: 'api v1' }, { name: 'api v2' }] } },
        { name: 'api v2', label: { name: 'production', colorCode: '#D92D20', deployments: [{ name: 'api v1' }, { name: 'api v2' }] } },
        // A reference to another organisation's label: null through the gateway subgraph's _entities.
        { name: 'not ours', label: null },
      ]);
      expect(forwardedToGateway.length).toBeGreaterThan(0);
      expect(new Set(forwardedToGateway)).toEqual(new Set([gw.key]));
      expect(deployments.keysSeen).toContain(gw.key);
    });

    it('starts from the gateway subgraph too (labels with their deployments)', async () => {
      const res = await viaRouter(`{ labels(search: "production") { total items { name deployments { name } } } }`);
      expect(res.body.errors).toBeUndefined();
      expect(res.body.data.labels).toEqual({ total: 1, items: [{ name: 'production', deployments: [{ name: 'api v1' }, { name: 'api v2' }] }] });
    });

    it('passes the gateway subgraph errors on (no key: UNAUTHENTICATED)', async () => {
      const res = await viaRouter(`{ labels { total } }`, null);
      expect(res.body.data ?? null).toBeNull();
      expect(JSON.stringify(res.body.errors)).toMatch(/UNAUTHENTICATED|401/);
    });
  });
});
