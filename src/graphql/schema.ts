import 'reflect-metadata';
import type { GraphQLSchema } from 'graphql';
import { buildSchema, type ClassType } from 'type-graphql';
import { toSubgraphSchema } from './federation';

/** What a domain module contributes to the GraphQL face: its resolvers (its loaders live in the request cache). */
export interface GraphQLModule {
  resolvers: readonly ClassType[];
}

const built = new WeakMap<readonly GraphQLModule[], { api: Promise<GraphQLSchema>; served?: Promise<GraphQLSchema> }>();

function entry(modules: readonly GraphQLModule[]) {
  let found = built.get(modules);
  if (!found) {
    const [first, ...rest] = modules.flatMap((m) => m.resolvers);
    if (!first) throw new Error('The GraphQL face needs at least one resolver');
    // `skipCheck`: entity types carry `@key`, which only the subgraph schema defines.
    const api = buildSchema({ resolvers: [first, ...rest], validate: true, skipCheck: true });
    built.set(modules, (found = { api }));
  }
  return found;
}

/**
 * The type-graphql schema of these modules, the client-facing API (built once per module list:
 * type-graphql's metadata is global to the process).
 */
export function buildGatewaySchema(modules: readonly GraphQLModule[]): Promise<GraphQLSchema> {
  return entry(modules).api;
}

/** The schema Apollo serves: the API above as a Federation v2 subgraph (`_service`, `_entities`). */
export function buildServedSchema(modules: readonly GraphQLModule[]): Promise<GraphQLSchema> {
  const found = entry(modules);
  found.served ??= found.api.then(toSubgraphSchema);
  return found.served;
}
