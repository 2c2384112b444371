import fs from 'node:fs';
import { GRAPHQL_MODULES } from '../../src/modules/graphql-modules';
import { printGatewaySdl, printSubgraphSdl, schemaFilePath, subgraphFilePath } from '../../src/graphql/sdl';

describe('schema.graphql and subgraph.graphql (run `npm run schema:emit` when this fails)', () => {
  it('schema.graphql is the client-facing SDL the resolvers produce', async () => {
    expect(fs.readFileSync(schemaFilePath(), 'utf8')).toBe(await printGatewaySdl(GRAPHQL_MODULES));
  });

  it('subgraph.graphql is the Federation v2 SDL the served schema reports', async () => {
    const file = fs.readFileSync(subgraphFilePath(), 'utf8');
    expect(file.replace(/^#.*\n\n/, '')).toBe((await printSubgraphSdl(GRAPHQL_MODULES)) + '\n');
  });

  it('schema.graphql has no federation plumbing', () => {
    const sdl = fs.readFileSync(schemaFilePath(), 'utf8');
    expect(sdl).not.toMatch(/_entities|_service|@key|@link/);
  });
});
