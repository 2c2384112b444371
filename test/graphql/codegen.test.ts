import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { projectRoot } from '../../src/db/migrations';

/**
 * codegen.yml run in memory (`generate(config, false)`, nothing written). In a child process: the
 * CLI's CommonJS build requires ESM-only packages (yargs, auto-bind), which Node loads and jest's
 * module runtime does not.
 */
const GENERATE_IN_MEMORY = `
const fs = require('node:fs');
const YAML = require('yaml');
const { generate } = require('@graphql-codegen/cli');
const config = YAML.parse(fs.readFileSync('codegen.yml', 'utf8'));
generate({ ...config, cwd: process.cwd(), silent: true }, false).then(
  (outputs) => process.stdout.write(JSON.stringify(outputs.map(({ filename, content }) => ({ filename, content })))),
  (err) => { console.error(err); process.exit(1); },
);`;

describe('codegen (run `npm run codegen` when this fails)', () => {
  it('test/graphql/generated/operations.ts is what codegen.yml generates from schema.graphql and the operations', async () => {
    const root = projectRoot();
    const { stdout } = await promisify(execFile)(process.execPath, ['-e', GENERATE_IN_MEMORY], {
      cwd: root,
      env: { ...process.env, NODE_OPTIONS: '' },
      maxBuffer: 64 * 1024 * 1024,
    });
    const outputs = JSON.parse(stdout) as { filename: string; content: string }[];
    expect(outputs.map((o) => path.relative(root, path.resolve(root, o.filename)))).toEqual(['test/graphql/generated/operations.ts']);
    for (const output of outputs) {
      expect(fs.readFileSync(path.resolve(root, output.filename), 'utf8')).toBe(output.content);
    }
  });
});
