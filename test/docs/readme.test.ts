/**
 * The README is part of the product: its provider tables are generated from the modules, every
 * configuration variable is documented, its links resolve, and it stands alone (a clone has nothing
 * beside it).
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { normaliseTable, README_BLOCKS, readmeBlock } from '../../scripts/provider-matrix';
import { CONFIG_VARIABLES } from '../../src/config';
import { PROVIDERS } from '../../src/providers/registry';

const ROOT = path.join(__dirname, '..', '..');
const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');

test.each(Object.entries(README_BLOCKS))('the %s table is current (npm run docs:providers rewrites it)', (name, generate) => {
  expect(normaliseTable(readmeBlock(readme, name))).toEqual(normaliseTable(generate()));
});

test('every configuration variable and provider endpoint variable is documented', () => {
  const endpoints = PROVIDERS.flatMap((p) => [...Object.values(p.endpoints).map((e) => e.env), ...(p.downloads ? [p.downloads.env] : [])]);
  const missing = [...CONFIG_VARIABLES, ...endpoints].filter((name) => !readme.includes(`\`${name}\``));
  expect(missing).toEqual([]);
});

test('links to files in the repository resolve, and nothing points outside it', () => {
  const targets = [...readme.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)].map((m) => m[1]).filter((target) => !/^https?:/.test(target));
  expect(targets.length).toBeGreaterThan(5);
  expect(targets.filter((target) => !existsSync(path.join(ROOT, target)))).toEqual([]);
  expect(readme).not.toMatch(/\.\.\/shared/);
});
