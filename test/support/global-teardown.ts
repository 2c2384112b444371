import { readdirSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { CHILD_BUILD_ENV, RUN_DIR_ENV } from './global-setup';

export default function globalTeardown(): void {
  const runDir = process.env[RUN_DIR_ENV];
  if (runDir) rmSync(runDir, { recursive: true, force: true });
  const childBuild = process.env[CHILD_BUILD_ENV];
  if (childBuild) {
    // The build, and any half-written copy of a worker that was killed while compiling.
    const name = basename(childBuild);
    const entries = (() => {
      try {
        return readdirSync(dirname(childBuild));
      } catch {
        return [];
      }
    })();
    for (const entry of entries.filter((e) => e === name || e.startsWith(`${name}.`))) {
      rmSync(join(dirname(childBuild), entry), { recursive: true, force: true });
    }
  }
}
