/** `npm run schema:emit`: writes schema.graphql and subgraph.graphql from the resolvers (a test fails when they are stale). */
import 'reflect-metadata';
import { schemaFilePath, subgraphFilePath, writeGatewaySdl } from '../src/graphql/sdl';
import { GRAPHQL_MODULES } from '../src/modules/graphql-modules';

writeGatewaySdl(GRAPHQL_MODULES).then(
  () => console.log(`Wrote ${schemaFilePath()} and ${subgraphFilePath()}`),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
