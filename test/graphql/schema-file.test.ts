import fs from 'node:fs';
import { printGatewaySdl, schemaFilePath } from '../../src/graphql/sdl';

describe('schema.graphql', () => {
  it('is the SDL the resolvers produce (run `npm run schema:emit` when this fails)', async () => {
    expect(fs.readFileSync(schemaFilePath(), 'utf8')).toBe(await printGatewaySdl());
  });
});
