import fs from 'node:fs';
import path from 'node:path';
import { lexicographicSortSchema, printSchema } from 'graphql';
import { projectRoot } from '../db/migrations';
import { buildGatewaySchema } from './schema';

export const schemaFilePath = () => path.join(projectRoot(), 'schema.graphql');

const HEADER = '# Generated from the type-graphql resolvers by `npm run schema:emit`. Do not edit by hand.\n\n';

/** The SDL frontends use, in a stable order so the checked-in file only changes with the schema. */
export async function printGatewaySdl(): Promise<string> {
  return HEADER + printSchema(lexicographicSortSchema(await buildGatewaySchema())) + '\n';
}

export async function writeGatewaySdl(): Promise<void> {
  fs.writeFileSync(schemaFilePath(), await printGatewaySdl());
}
