import { rmSync } from 'node:fs';
import { RUN_DIR_ENV } from './global-setup';

export default function globalTeardown(): void {
  const runDir = process.env[RUN_DIR_ENV];
  if (runDir) rmSync(runDir, { recursive: true, force: true });
}
