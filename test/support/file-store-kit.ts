/**
 * The file-store contract: what every FileStore (the local disk, S3) does with a stream put under a
 * key. A store's own test calls `fileStoreContract` with the store started for each test and the keys
 * it holds, and keeps only what that store does its own way (temporary files, multipart uploads).
 */
import { randomBytes } from 'node:crypto';
import { PassThrough, Readable } from 'node:stream';
import { GatewayError } from '../../src/errors';
import type { FileStore } from '../../src/storage/file-store';
import { brokenSource, readAll, sha256 } from './streams';

export interface StoreUnderTest {
  store(): FileStore;
  /** The keys the store holds (to prove that nothing, or only what was put, is left behind). */
  keys(): Promise<string[]>;
}

const from = (text: string) => Readable.from([Buffer.from(text)]);

export function fileStoreContract({ store, keys }: StoreUnderTest): void {
  it('stores a stream, reporting its size and SHA-256, reads it back and holds only its key', async () => {
    const chunks = [Buffer.from('hello '), Buffer.from('wörld'), randomBytes(250_000)];
    const data = Buffer.concat(chunks);
    expect(await store().put('file-abc', Readable.from(chunks), { maxBytes: 1_000_000 })).toEqual({ bytes: data.length, sha256: sha256(data) });
    expect(await readAll(await store().open('file-abc'))).toEqual(data);
    expect(await keys()).toEqual(['file-abc']);
  });

  it('stores an empty stream', async () => {
    expect(await store().put('empty', Readable.from([]), { maxBytes: 10 })).toEqual({ bytes: 0, sha256: sha256(Buffer.alloc(0)) });
    expect(await readAll(await store().open('empty'))).toEqual(Buffer.alloc(0));
  });

  it('fails with payload_too_large past maxBytes, leaving nothing behind and the source intact', async () => {
    const source = new PassThrough();
    source.write(Buffer.alloc(60));
    source.write(Buffer.alloc(60));
    const err = await store()
      .put('big', source, { maxBytes: 100 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GatewayError);
    expect(err).toMatchObject({ kind: 'payload_too_large', status: 413, param: 'file', message: 'File exceeds the maximum size of 100 bytes' });
    expect(source.destroyed).toBe(false);
    source.destroy();
    expect(await keys()).toEqual([]);
  });

  it.each([
    ['error', 'connection reset'],
    ['destroy', 'Premature close'],
  ] as const)('leaves nothing behind when the source ends with %s', async (ending, message) => {
    await expect(store().put('broken', brokenSource([Buffer.alloc(1000, 1), Buffer.alloc(1000, 2)], ending, 50), { maxBytes: 1_000_000 })).rejects.toThrow(
      message,
    );
    expect(await keys()).toEqual([]);
  });

  it('replaces an existing object only when the new put succeeds', async () => {
    await store().put('same', from('first'), { maxBytes: 100 });
    await expect(store().put('same', Readable.from([Buffer.alloc(200)]), { maxBytes: 100 })).rejects.toThrow();
    expect((await readAll(await store().open('same'))).toString()).toBe('first');
    await store().put('same', from('second'), { maxBytes: 100 });
    expect((await readAll(await store().open('same'))).toString()).toBe('second');
    expect(await keys()).toEqual(['same']);
  });

  it('does not lose data when the caller also reads the source with a data listener', async () => {
    const source = new PassThrough();
    const seen: Buffer[] = [];
    source.on('data', (chunk: Buffer) => seen.push(chunk));
    const putting = store().put('tapped', source, { maxBytes: 1000 });
    source.end(Buffer.from('{"a":1}\n{"b":2}\n'));
    expect((await putting).bytes).toBe(16);
    expect(Buffer.concat(seen).toString()).toBe('{"a":1}\n{"b":2}\n');
    expect((await readAll(await store().open('tapped'))).toString()).toBe('{"a":1}\n{"b":2}\n');
  });

  it('rejects open of a missing key with not_found, and deletes idempotently', async () => {
    await expect(store().open('nope')).rejects.toMatchObject({ kind: 'not_found', status: 404 });
    await store().put('gone', from('x'), { maxBytes: 10 });
    await store().delete('gone');
    await store().delete('gone');
    await store().delete('never-existed');
    await expect(store().open('gone')).rejects.toMatchObject({ kind: 'not_found' });
  });

  it.each(['', '..', '../escape', 'a/b', 'a\\b', '.hidden', 'x..y', 'nul\0byte'])('refuses the unsafe key %j', async (key) => {
    await expect(store().put(key, from('x'), { maxBytes: 10 })).rejects.toMatchObject({ kind: 'invalid_request' });
    await expect(store().open(key)).rejects.toMatchObject({ kind: 'invalid_request' });
    await expect(store().delete(key)).rejects.toMatchObject({ kind: 'invalid_request' });
  });
}
