import { buildSubgraphSchema } from '@apollo/subgraph';
import { MapperKind, mapSchema, printSchemaWithDirectives } from '@graphql-tools/utils';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { ApolloServerPlugin } from '@apollo/server';
import {
  assertValidSchema,
  BREAK,
  defaultFieldResolver,
  GraphQLError,
  isObjectType,
  parse,
  visit,
  type DocumentNode,
  type GraphQLFieldResolver,
  type GraphQLSchema,
} from 'graphql';
import { invalidField } from '../errors';
import { createResolversMap } from 'type-graphql';
import { schemaEntities } from './entity';

/**
 * Apollo Federation v2: the GraphQL face is a subgraph. Entity types are registered with `registerEntity`
 * (./entity.ts); this module turns the type-graphql schema into the subgraph schema Apollo serves.
 */

export const FEDERATION_SPEC_URL = 'https://specs.apollo.dev/federation/v2.3';
export const FEDERATION_LINK = `extend schema @link(url: "${FEDERATION_SPEC_URL}", import: ["@key"])`;

type ResolverMap = NonNullable<Extract<Parameters<typeof buildSubgraphSchema>[0], { typeDefs: unknown }>['resolvers']>;

/** The subgraph type definitions of a type-graphql schema (its `@key` directives included). */
export function subgraphTypeDefs(schema: GraphQLSchema): string {
  return `${FEDERATION_LINK}\n\n${printSchemaWithDirectives(schema)}`;
}

/** The type-graphql schema as a Federation v2 subgraph: same resolvers, plus `_service` and `_entities`. */
export function toSubgraphSchema(schema: GraphQLSchema): GraphQLSchema {
  const resolvers = createResolversMap(schema) as ResolverMap;
  const entities = schemaEntities(schema);
  for (const entity of entities) {
    resolvers[entity.typeName] = Object.assign({}, resolvers[entity.typeName], { __resolveReference: entity.resolveReference });
  }
  const entityTypes = new Set(entities.map((e) => e.typeName));
  // Rebuilt from SDL, the subgraph lost the fields' extensions (their declared query cost): carried over.
  const subgraph = mapSchema(buildSubgraphSchema({ typeDefs: parse(subgraphTypeDefs(schema)), resolvers }), {
    [MapperKind.OBJECT_FIELD]: (field, name, typeName) => {
      if (typeName === 'Query' && name === '_entities') return { ...field, resolve: checkedRepresentations(field.resolve, entityTypes) };
      const type = schema.getType(typeName);
      const declared = isObjectType(type) ? type.getFields()[name]?.extensions : undefined;
      return declared && Object.keys(declared).length ? { ...field, extensions: { ...field.extensions, ...declared } } : field;
    },
  });
  // type-graphql built with `skipCheck`: the checks it skipped run here, on the schema that is served.
  assertValidSchema(subgraph);
  return subgraph;
}

/**
 * `_entities` refuses a representation whose `__typename` is not an entity of this subgraph as the
 * caller's mistake (BAD_USER_INPUT naming it), before any is loaded; @apollo/subgraph would throw a
 * plain Error, answered as an internal error and logged as one.
 */
function checkedRepresentations(
  resolve: GraphQLFieldResolver<unknown, unknown> | undefined,
  entityTypes: ReadonlySet<string>,
): GraphQLFieldResolver<unknown, unknown> {
  const known = [...entityTypes].sort().join(', ');
  return (source, args: { representations?: unknown }, context, info) => {
    const representations = Array.isArray(args.representations) ? (args.representations as unknown[]) : [];
    for (const [i, representation] of representations.entries()) {
      const typename: unknown =
        typeof representation === 'object' && representation !== null ? (representation as { __typename?: unknown }).__typename : undefined;
      if (typeof typename !== 'string' || !entityTypes.has(typename)) {
        throw invalidField(['representations', i, '__typename'], `must name an entity type of this subgraph (${known})`, 'unknown_entity_type');
      }
    }
    return (resolve ?? defaultFieldResolver)(source, args, context, info);
  };
}

/** The header a federation router sends `GATEWAY_FEDERATION_SECRET` in. */
export const FEDERATION_SECRET_HEADER = 'x-gateway-federation-secret';

/**
 * `_service { sdl }` is the whole schema, introspection in all but name: a router composing the
 * supergraph needs it, nobody else does. With `GATEWAY_FEDERATION_SECRET` set it answers only requests
 * carrying that secret in `x-gateway-federation-secret` (compared in constant time); without one it
 * answers everyone outside production (like introspection) and nobody in production. Refused: 403
 * `FORBIDDEN`, before any resolver runs.
 */
export function serviceSdlGate(options: { secret: string | undefined; production: boolean }): ApolloServerPlugin {
  const secret = options.secret === undefined ? null : digest(options.secret);
  const asksForSdl = new WeakMap<DocumentNode, boolean>();
  const allowed = (sent: string | undefined) => (secret === null ? !options.production : sent !== undefined && timingSafeEqual(digest(sent), secret));
  return {
    requestDidStart: () =>
      Promise.resolve({
        didResolveOperation: ({ document, request }) => {
          let asks = asksForSdl.get(document);
          if (asks === undefined) asksForSdl.set(document, (asks = selectsService(document)));
          if (!asks || allowed(request.http?.headers.get(FEDERATION_SECRET_HEADER))) return Promise.resolve();
          const message =
            secret === null
              ? '_service is not served in production without GATEWAY_FEDERATION_SECRET'
              : `_service needs the federation router's secret (${FEDERATION_SECRET_HEADER})`;
          return Promise.reject(new GraphQLError(message, { extensions: { code: 'FORBIDDEN', http: { status: 403 } } }));
        },
      }),
  };
}

/** Equal-length values for timingSafeEqual, whatever was sent. */
const digest = (value: string): Buffer => createHash('sha256').update(value).digest();

/** Whether an operation document selects `_service` anywhere (an alias or a fragment does not hide a field's name). */
function selectsService(document: DocumentNode): boolean {
  let found = false;
  visit(document, {
    Field(node) {
      if (node.name.value !== '_service') return undefined;
      found = true;
      return BREAK;
    },
  });
  return found;
}
