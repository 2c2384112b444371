#!/usr/bin/env node
// `npm start`: rebuilds only when a source is newer than the build (a fresh clone is built once by
// `npm install`, through `prepare`), then runs the built gateway in this same process (a second Node
// process would add its own start-up time). Walking the sources costs a few milliseconds; compiling
// costs seconds, so it happens only when something changed.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
const built = path.join(root, 'dist', 'src', 'main.js');
const SOURCES = [
  'src',
  'bench',
  'console/src',
  'console/index.html',
  'console/explorer.html',
  'console/vite.config.mjs',
  'prisma/schema.prisma',
  'tsconfig.json',
  'tsconfig.build.json',
  'package-lock.json',
];

/** The newest modification time under `p` (generated Prisma client excluded: it follows the schema). */
function newest(p) {
  const stat = fs.statSync(p, { throwIfNoEntry: false });
  if (!stat) return 0;
  if (!stat.isDirectory()) return stat.mtimeMs;
  if (p === path.join(root, 'src', 'generated')) return 0;
  return Math.max(0, ...fs.readdirSync(p).map((name) => newest(path.join(p, name))));
}

const builtAt = fs.statSync(built, { throwIfNoEntry: false })?.mtimeMs ?? 0;
const changedAt = Math.max(...SOURCES.map((s) => newest(path.join(root, s))));
if (changedAt > builtAt) {
  process.stderr.write(builtAt ? 'Sources changed since the last build: rebuilding…\n' : 'No build yet: building…\n');
  execFileSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
}

require(built).runFromCommandLine();
