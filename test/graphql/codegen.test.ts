import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { projectRoot } from '../../src/db/migrations';
import { nodeArgs } from '../support/compiled';

/**
 * In a child process: GraphQL Code Generator's plugins require ESM-only packages (auto-bind), which
 * Node loads and jest's module runtime does not.
 */
describe('codegen (run `npm run codegen` when this fails)', () => {
  it('test/graphql/generated/operations.ts is what codegen generates from schema.graphql and the operations', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, nodeArgs('scripts/codegen.ts', '--stdout'), {
      cwd: projectRoot(),
      env: { ...process.env, NODE_OPTIONS: '' },
      maxBuffer: 64 * 1024 * 1024,
    });
    expect(fs.readFileSync(path.join(projectRoot(), 'test/graphql/generated/operations.ts'), 'utf8')).toBe(stdout);
  });
});
