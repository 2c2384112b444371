import 'reflect-metadata';
import type { GraphQLSchema } from 'graphql';
import { buildSchema } from 'type-graphql';
import { LabelResolver } from '../modules/labels/label.resolver';

/** Every resolver of the GraphQL face; a new domain adds its resolver here. */
export const RESOLVERS = [LabelResolver] as const;

let cached: Promise<GraphQLSchema> | undefined;

/** The type-graphql schema (built once per process: type-graphql's metadata is global). */
export function buildGatewaySchema(): Promise<GraphQLSchema> {
  cached ??= buildSchema({ resolvers: RESOLVERS as unknown as [Function, ...Function[]], validate: true });
  return cached;
}
