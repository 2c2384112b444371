import fs from 'node:fs';
import { errnoCode } from '../errors';
import type { Logger } from '../logger';

/**
 * What the gateway keeps on disk (the embedded database, uploaded files, the master key) is for the
 * user it runs as: directories 0700, files 0600, whatever the umask.
 */
export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/**
 * Creates `dir` and its missing parents (DATA_DIR among them) as private directories. A directory of
 * the gateway's own (`pglite/`, `files/`) that an earlier version created readable by others is made
 * private too; DATA_DIR itself may be the operator's choice (a volume, a shared directory), so
 * `warnIfShared` only reports it.
 */
export function ensurePrivateDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  makePrivate(dir);
}

/** Takes the group's and others' permissions off an existing directory of the gateway's own; none there, nothing to do. */
export function makePrivate(dir: string): void {
  let mode: number;
  try {
    mode = fs.statSync(dir).mode & 0o777;
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return;
    throw err;
  }
  if (mode & 0o077) fs.chmodSync(dir, mode & PRIVATE_DIR_MODE);
}

/** A warning, once at start, when other users can reach what is under `dir`. */
export function warnIfShared(dir: string, logger: Pick<Logger, 'warn'>): void {
  let mode: number;
  try {
    mode = fs.statSync(dir).mode & 0o777;
  } catch {
    return; // not made yet: it will be made private
  }
  if (mode & 0o077) logger.warn({ path: dir, mode: mode.toString(8) }, 'DATA_DIR is readable by other users; chmod 700 it');
}
