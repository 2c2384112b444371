/**
 * The local-disk FileStore: the file-store contract (test/support/file-store-kit.ts) on a root that
 * does not exist yet (the store creates it on demand), and what only the disk has: a put written to
 * a temporary file first (none left over), and no key that reaches outside the root.
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { LocalFileStore } from '../../src/storage/local-file-store';
import { fileStoreContract } from '../support/file-store-kit';

describe('LocalFileStore', () => {
  let base: string;
  let root: string;
  let store: LocalFileStore;

  beforeEach(async () => {
    base = await mkdtemp(join(tmpdir(), 'file-store-'));
    root = join(base, 'nested', 'files'); // not there yet: the store creates it on demand
    store = new LocalFileStore(root);
  });

  afterEach(async () => {
    await rm(base, { recursive: true, force: true });
  });

  // The files in the root: temporary files would show here.
  fileStoreContract({ store: () => store, keys: () => readdir(root).catch(() => []) });

  it('accepts a file of exactly maxBytes', async () => {
    const data = Buffer.alloc(64, 1);
    await expect(store.put('exact', Readable.from([data]), { maxBytes: 64 })).resolves.toMatchObject({ bytes: 64 });
  });

  it('writes nothing outside its root through a key', async () => {
    await writeFile(join(base, 'escape'), 'outside');
    await expect(store.put('../escape', Readable.from([Buffer.from('x')]), { maxBytes: 10 })).rejects.toMatchObject({ kind: 'invalid_request' });
    await expect(store.delete('../escape')).rejects.toMatchObject({ kind: 'invalid_request' });
    expect((await readFile(join(base, 'escape'))).toString()).toBe('outside');
  });
});
