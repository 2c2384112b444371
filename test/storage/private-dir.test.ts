/**
 * What the gateway keeps on disk is private to its user: directories it makes are 0700 whatever the
 * umask, its own directories left open by an earlier version are closed, and a DATA_DIR others can
 * read is reported (it may be shared on purpose, so it is not changed).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ensurePrivateDir, makePrivate, warnIfShared } from '../../src/storage/private-dir';
import { LocalFileStore } from '../../src/storage/local-file-store';

let root: string;
beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-private-'));
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

const mode = (p: string) => fs.statSync(p).mode & 0o777;

it('makes missing directories, parents included, 0700 under a permissive umask', () => {
  const previous = process.umask(0o000);
  try {
    ensurePrivateDir(path.join(root, 'data', 'pglite'));
  } finally {
    process.umask(previous);
  }
  expect(mode(path.join(root, 'data'))).toBe(0o700);
  expect(mode(path.join(root, 'data', 'pglite'))).toBe(0o700);
});

it('closes an existing directory of its own that others can read, and leaves a missing one alone', () => {
  const dir = path.join(root, 'files');
  fs.mkdirSync(dir, { mode: 0o755 });
  fs.chmodSync(dir, 0o755);
  makePrivate(dir);
  expect(mode(dir)).toBe(0o700);
  expect(() => makePrivate(path.join(root, 'absent'))).not.toThrow();
  expect(fs.existsSync(path.join(root, 'absent'))).toBe(false);
});

it('makes the local file store directory private when the store starts', () => {
  const dir = path.join(root, 'files');
  fs.mkdirSync(dir);
  fs.chmodSync(dir, 0o755);
  new LocalFileStore(dir);
  expect(mode(dir)).toBe(0o700);
});

it('warns about a DATA_DIR others can read, without changing it', () => {
  const warnings: unknown[] = [];
  const logger = { warn: (...args: unknown[]) => warnings.push(args) };
  warnIfShared(root, logger);
  expect(warnings).toEqual([]);
  fs.chmodSync(root, 0o750);
  warnIfShared(root, logger);
  expect(warnings).toEqual([[{ path: root, mode: '750' }, 'DATA_DIR is readable by other users; chmod 700 it']]);
  expect(mode(root)).toBe(0o750);
  warnIfShared(path.join(root, 'absent'), logger);
  expect(warnings).toHaveLength(1);
});
