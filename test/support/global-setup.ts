import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';

/** Names this run's temporary folder (the migrated PGlite dump lives there); the workers inherit it. */
export const RUN_DIR_ENV = 'GW_TEST_RUN_DIR';

/**
 * Names the folder this run's child processes are compiled into (test/support/compiled.ts), built by
 * the first test that starts one. Inside the project, so that the compiled files resolve packages from
 * node_modules and find the project from their own location as src/ does.
 */
export const CHILD_BUILD_ENV = 'GW_TEST_CHILD_BUILD';
export const CHILD_BUILDS = join(__dirname, '..', '..', '.cache', 'test-children');

export default function globalSetup(): void {
  const runDir = mkdtempSync(join(tmpdir(), 'gw-test-run-'));
  process.env[RUN_DIR_ENV] = runDir;
  removeAbandonedBuilds();
  // Named after this process: the build of a run killed before its teardown is removed by a later run.
  process.env[CHILD_BUILD_ENV] = join(CHILD_BUILDS, `${process.pid}-${basename(runDir)}`);
}

/** The child builds of runs whose jest process is gone (a run of another checkout never writes here). */
function removeAbandonedBuilds(): void {
  let entries: string[];
  try {
    entries = readdirSync(CHILD_BUILDS);
  } catch {
    return;
  }
  for (const entry of entries) {
    const pid = Number(/^(\d+)-/.exec(entry)?.[1]);
    if (pid && !isRunning(pid)) rmSync(join(CHILD_BUILDS, entry), { recursive: true, force: true });
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists, owned by another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
