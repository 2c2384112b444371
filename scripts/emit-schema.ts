/** `npm run schema:emit`: writes schema.graphql from the resolvers (a test fails when it is stale). */
import 'reflect-metadata';
import { schemaFilePath, writeGatewaySdl } from '../src/graphql/sdl';

writeGatewaySdl().then(
  () => console.log(`Wrote ${schemaFilePath()}`),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
