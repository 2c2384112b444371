import { buildSubgraphSchema } from '@apollo/subgraph';
import { MapperKind, mapSchema, printSchemaWithDirectives } from '@graphql-tools/utils';
import { assertValidSchema, isObjectType, parse, type GraphQLSchema } from 'graphql';
import { createResolversMap } from 'type-graphql';
import { schemaEntities } from './entity';

/**
 * Apollo Federation v2: the GraphQL face is a subgraph. Entity types are marked with `@Entity`
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
  for (const entity of schemaEntities(schema)) {
    resolvers[entity.typeName] = Object.assign({}, resolvers[entity.typeName], { __resolveReference: entity.resolveReference });
  }
  // Rebuilt from SDL, the subgraph lost the fields' extensions (their declared query cost): carried over.
  const subgraph = mapSchema(buildSubgraphSchema({ typeDefs: parse(subgraphTypeDefs(schema)), resolvers }), {
    [MapperKind.OBJECT_FIELD]: (field, name, typeName) => {
      const type = schema.getType(typeName);
      const declared = isObjectType(type) ? type.getFields()[name]?.extensions : undefined;
      return declared && Object.keys(declared).length ? { ...field, extensions: { ...field.extensions, ...declared } } : field;
    },
  });
  // type-graphql built with `skipCheck`: the checks it skipped run here, on the schema that is served.
  assertValidSchema(subgraph);
  return subgraph;
}
