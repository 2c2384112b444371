import fs from 'node:fs';
import path from 'node:path';
import { graphql, lexicographicSortSchema, printSchema } from 'graphql';
import { projectRoot } from '../db/migrations';
import { buildGatewaySchema, buildServedSchema, type GraphQLModule } from './schema';

/** The client-facing SDL (codegen reads it): the API without the federation plumbing. */
export const schemaFilePath = () => path.join(projectRoot(), 'schema.graphql');
/** The Federation v2 subgraph SDL, as `{ _service { sdl } }` answers it (for supergraph tooling). */
export const subgraphFilePath = () => path.join(projectRoot(), 'subgraph.graphql');

const HEADER = '# Generated from the type-graphql resolvers by `npm run schema:emit`. Do not edit by hand.\n\n';

/** The SDL frontends use, in a stable order so the checked-in file only changes with the schema. */
export async function printGatewaySdl(modules: readonly GraphQLModule[]): Promise<string> {
  return HEADER + printSchema(lexicographicSortSchema(await buildGatewaySchema(modules))) + '\n';
}

/** The subgraph SDL the served schema reports in `_service { sdl }`. */
export async function printSubgraphSdl(modules: readonly GraphQLModule[]): Promise<string> {
  const result = await graphql({ schema: await buildServedSchema(modules), source: '{ _service { sdl } }' });
  const service = result.data?._service;
  const sdl = service && typeof service === 'object' && 'sdl' in service ? service.sdl : undefined;
  if (typeof sdl !== 'string') throw new Error(`_service { sdl } failed: ${JSON.stringify(result.errors)}`);
  return sdl;
}

export async function writeGatewaySdl(modules: readonly GraphQLModule[]): Promise<void> {
  fs.writeFileSync(schemaFilePath(), await printGatewaySdl(modules));
  fs.writeFileSync(subgraphFilePath(), HEADER + (await printSubgraphSdl(modules)) + '\n');
}
