import 'reflect-metadata';
import type { GraphQLSchema } from 'graphql';
import { buildSchema } from 'type-graphql';
import { toSubgraphSchema } from './federation';
import { FileResolver } from '../modules/files/file.resolver';
import { FineTuningJobResolver } from '../modules/fine-tuning/fine-tuning.resolver';
import { IntegrationResolver } from '../modules/integrations/integration.resolver';
import { LabelResolver } from '../modules/labels/label.resolver';
import { PromptPartialResolver } from '../modules/partials/partial.resolver';

/** Every resolver of the GraphQL face; a new domain adds its resolver here. */
export const RESOLVERS = [LabelResolver, PromptPartialResolver, FileResolver, IntegrationResolver, FineTuningJobResolver] as const;

let cached: Promise<GraphQLSchema> | undefined;
let served: Promise<GraphQLSchema> | undefined;

/**
 * The type-graphql schema, the client-facing API (built once per process: type-graphql's metadata is
 * global). `skipCheck`: entity types carry `@key`, which only the subgraph schema defines.
 */
export function buildGatewaySchema(): Promise<GraphQLSchema> {
  cached ??= buildSchema({ resolvers: RESOLVERS as unknown as [Function, ...Function[]], validate: true, skipCheck: true });
  return cached;
}

/** The schema Apollo serves: the API above as a Federation v2 subgraph (`_service`, `_entities`). */
export function buildServedSchema(): Promise<GraphQLSchema> {
  served ??= buildGatewaySchema().then(toSubgraphSchema);
  return served;
}
