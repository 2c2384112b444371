#!/usr/bin/env node
// Runs `prisma generate` offline. The Prisma CLI insists on locating its native schema engine before
// generating, although generation does not use it; pointing it at an empty stub file skips the
// download that would fail without network access.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
const stub = path.join(root, '.prisma-engine-stub');
if (!fs.existsSync(stub)) fs.writeFileSync(stub, '');

try {
  execFileSync(process.execPath, [require.resolve('prisma/build/index.js'), 'generate'], {
    cwd: root,
    stdio: process.argv.includes('--verbose') ? 'inherit' : 'pipe',
    env: { ...process.env, PRISMA_SCHEMA_ENGINE_BINARY: stub, PRISMA_HIDE_UPDATE_MESSAGE: '1' },
  });
} catch (err) {
  // Quiet on success; on failure show what Prisma said.
  process.stderr.write(String(err.stdout ?? '') + String(err.stderr ?? ''));
  process.exit(1);
}
