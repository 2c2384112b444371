import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Names this run's temporary folder (the migrated PGlite dump lives there); the workers inherit it. */
export const RUN_DIR_ENV = 'GW_TEST_RUN_DIR';

export default function globalSetup(): void {
  process.env[RUN_DIR_ENV] = mkdtempSync(join(tmpdir(), 'gw-test-run-'));
}
