import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { GatewayError } from '../../src/errors';
import { LocalFileStore } from '../../src/storage/local-file-store';
import { brokenSource, readAll, sha256 } from '../support/streams';

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

  it('stores a stream, reporting its size and SHA-256, and reads it back', async () => {
    const chunks = [Buffer.from('hello '), Buffer.from('wörld'), Buffer.alloc(100_000, 7)];
    const data = Buffer.concat(chunks);

    const result = await store.put('file-abc', Readable.from(chunks), { maxBytes: 1_000_000 });

    expect(result).toEqual({ bytes: data.length, sha256: sha256(data) });
    expect(await readAll(await store.open('file-abc'))).toEqual(data);
    expect(await readdir(root)).toEqual(['file-abc']); // no temporary file left over
  });

  it('accepts a file of exactly maxBytes', async () => {
    const data = Buffer.alloc(64, 1);
    await expect(store.put('exact', Readable.from([data]), { maxBytes: 64 })).resolves.toMatchObject({ bytes: 64 });
  });

  it('stores an empty stream', async () => {
    const result = await store.put('empty', Readable.from([]), { maxBytes: 10 });
    expect(result).toEqual({ bytes: 0, sha256: sha256(Buffer.alloc(0)) });
    expect(await readAll(await store.open('empty'))).toEqual(Buffer.alloc(0));
  });

  it('fails with payload_too_large past maxBytes, leaves nothing behind and does not destroy the source', async () => {
    const source = new PassThrough();
    source.write(Buffer.alloc(60));
    source.write(Buffer.alloc(60));

    const err = await store.put('big', source, { maxBytes: 100 }).catch((e: unknown) => e);

    expect(err).toBeInstanceOf(GatewayError);
    expect(err).toMatchObject({ kind: 'payload_too_large', status: 413, param: 'file' });
    expect((err as Error).message).toBe('File exceeds the maximum size of 100 bytes');
    expect(await readdir(root)).toEqual([]);
    expect(source.destroyed).toBe(false);
    source.destroy();
  });

  it.each([
    ['error', 'connection reset'],
    ['destroy', 'Premature close'],
  ] as const)('removes the temporary file when the source ends with %s', async (ending, message) => {
    const source = brokenSource([Buffer.alloc(1000, 1), Buffer.alloc(1000, 2)], ending);

    await expect(store.put('broken', source, { maxBytes: 1_000_000 })).rejects.toThrow(message);

    expect(await readdir(root)).toEqual([]);
  });

  it('replaces an existing object only when the new put succeeds', async () => {
    await store.put('same', Readable.from([Buffer.from('first')]), { maxBytes: 100 });

    await expect(store.put('same', Readable.from([Buffer.alloc(200)]), { maxBytes: 100 })).rejects.toThrow();
    expect((await readAll(await store.open('same'))).toString()).toBe('first');

    await store.put('same', Readable.from([Buffer.from('second')]), { maxBytes: 100 });
    expect((await readAll(await store.open('same'))).toString()).toBe('second');
    expect(await readdir(root)).toEqual(['same']);
  });

  it('does not lose data when the caller also reads the source with a data listener', async () => {
    const source = new PassThrough();
    const seen: Buffer[] = [];
    source.on('data', (chunk: Buffer) => seen.push(chunk));
    const putting = store.put('tapped', source, { maxBytes: 1000 });
    source.end(Buffer.from('{"a":1}\n{"b":2}\n'));

    const result = await putting;

    expect(Buffer.concat(seen).toString()).toBe('{"a":1}\n{"b":2}\n');
    expect(result.bytes).toBe(16);
    expect((await readFile(join(root, 'tapped'))).toString()).toBe('{"a":1}\n{"b":2}\n');
  });

  it('rejects open of a missing key with not_found', async () => {
    await expect(store.open('nope')).rejects.toMatchObject({ kind: 'not_found', status: 404 });
  });

  it('deletes idempotently', async () => {
    await store.put('gone', Readable.from([Buffer.from('x')]), { maxBytes: 10 });

    await store.delete('gone');
    await store.delete('gone');
    await store.delete('never-existed');

    await expect(store.open('gone')).rejects.toMatchObject({ kind: 'not_found' });
  });

  it.each(['', '..', '../escape', 'a/b', 'a\\b', '.hidden', 'x..y', 'nul\0byte'])('refuses the unsafe key %j', async (key) => {
    await writeFile(join(base, 'escape'), 'outside');
    await expect(store.put(key, Readable.from([Buffer.from('x')]), { maxBytes: 10 })).rejects.toMatchObject({
      kind: 'invalid_request',
    });
    await expect(store.open(key)).rejects.toMatchObject({ kind: 'invalid_request' });
    await expect(store.delete(key)).rejects.toMatchObject({ kind: 'invalid_request' });
    expect((await readFile(join(base, 'escape'))).toString()).toBe('outside');
  });
});
