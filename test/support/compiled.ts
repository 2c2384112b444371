/**
 * The tests' child processes (the gateway, the admin CLI, codegen) run the checkout's TypeScript
 * compiled once per jest run, by the first test that starts one. `node -r @swc-node/register` would
 * load TypeScript and transpile the module graph again at every start: about half a second of each.
 *
 * Compiled with @swc-node/register's own `compile` and the options its hook derives from tsconfig.json,
 * so a child runs the JavaScript it ran before, source map included (`--enable-source-maps` maps stack
 * traces to src/ as its hook did). Every module of src/ and scripts/ is compiled (a third of a second),
 * from the sources as they are when the run needs them: a stale build cannot be run. The folder
 * (test/support/global-setup.ts) lies inside the project: packages resolve from node_modules, and what
 * src/ finds from its own location (projectRoot, the console's build) is found alike.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type * as SwcNodeRegister from '@swc-node/register/lib/register';
import type * as SwcNodeTsconfig from '@swc-node/register/lib/read-default-tsconfig';
import type * as TypeScript from 'typescript';
import { CHILD_BUILD_ENV } from './global-setup';

const ROOT = path.join(__dirname, '..', '..');
const SOURCES = ['src', 'scripts'];

/** The compiled file of `source` (a .ts path from the project root), compiled first if this run has not yet. */
export function compiled(source: string): string {
  const dir = process.env[CHILD_BUILD_ENV];
  if (!dir) throw new Error(`${CHILD_BUILD_ENV} is not set: jest's globalSetup (test/support/global-setup.ts) names the build`);
  if (!fs.existsSync(dir)) build(dir);
  return path.join(dir, source.replace(/\.ts$/, '.js'));
}

/** `node`'s arguments to run `source` compiled, with `args`. */
export const nodeArgs = (source: string, ...args: string[]): string[] => ['--enable-source-maps', compiled(source), ...args];

/** `node`'s arguments to evaluate `script` (which requires files through `compiled`). */
export const nodeEvalArgs = (script: string): string[] => ['--enable-source-maps', '-e', script];

/**
 * Both jest workers may find no build and compile one: each writes its own folder and publishes it by
 * renaming, which never replaces a build a child may be running from; the loser drops its copy.
 */
function build(dir: string): void {
  const load = createRequire(__filename);
  const { compile } = load('@swc-node/register/register') as typeof SwcNodeRegister;
  const { readDefaultTsConfig } = load('@swc-node/register/read-default-tsconfig') as typeof SwcNodeTsconfig;
  const { ModuleKind } = load('typescript') as typeof TypeScript;
  // As register() does: tsconfig.json's options, CommonJS.
  const options = { ...(readDefaultTsConfig(path.join(ROOT, 'tsconfig.json')) as TypeScript.CompilerOptions), module: ModuleKind.CommonJS };
  const building = `${dir}.${process.pid}.tmp`;
  fs.rmSync(building, { recursive: true, force: true });
  try {
    for (const file of SOURCES.flatMap((source) => filesUnder(path.join(ROOT, source)))) {
      if (file.endsWith('.d.ts')) continue;
      const target = path.join(building, path.relative(ROOT, file));
      fs.mkdirSync(path.dirname(target), { recursive: true });
      // Anything else (the scripts' plain JavaScript, a file a module reads beside itself) is copied as it is.
      if (file.endsWith('.ts')) fs.writeFileSync(target.replace(/\.ts$/, '.js'), compile(fs.readFileSync(file, 'utf8'), file, options));
      else fs.copyFileSync(file, target);
    }
    publish(building, dir);
  } finally {
    fs.rmSync(building, { recursive: true, force: true });
  }
}

function publish(building: string, dir: string): void {
  try {
    fs.renameSync(building, dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw err;
  }
}

function filesUnder(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    return entry.isDirectory() ? filesUnder(file) : [file];
  });
}
