import { randomBytes } from 'node:crypto';
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { finished } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { badRequest, errnoCode, notFound } from '../errors';
import { ByteMeter, type FileStore, type PutOptions, type StoredObject } from './file-store';
import { makePrivate, PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from './private-dir';

/**
 * A FileStore on the local disk: one file per key, directly under `root`.
 *
 * Temporary files live in the same directory as their final name so the closing rename stays on
 * one filesystem and is therefore atomic. They start with a dot, which real keys may not, so a
 * temporary file can never be mistaken for (or collide with) a stored object.
 */
export class LocalFileStore implements FileStore {
  constructor(private readonly root: string) {
    // Made private by put() when it makes it; one an earlier version made readable by others, here.
    makePrivate(root);
  }

  async put(key: string, source: NodeJS.ReadableStream, opts: PutOptions): Promise<StoredObject> {
    const finalPath = this.pathFor(key);
    const meter = new ByteMeter(opts.maxBytes);
    // Hooked up before the first await: a caller that also reads the source with a 'data'
    // listener (to validate it, say) must not have chunks flow past us while the directory is made.
    const detach = feedWithoutOwning(source, meter);
    const tempPath = join(this.root, `.${key}.${randomBytes(8).toString('hex')}.tmp`);
    let out: WriteStream | undefined;
    try {
      await mkdir(this.root, { recursive: true, mode: PRIVATE_DIR_MODE });
      // `wx` refuses to reuse an existing path; `flush` fsyncs before close so a crash right after
      // the rename cannot expose a truncated file under the final name.
      out = createWriteStream(tempPath, { flags: 'wx', flush: true, mode: PRIVATE_FILE_MODE });
      await pipeline(meter, out);
      await closed(out);
      await rename(tempPath, finalPath);
      return meter.result();
    } catch (err) {
      meter.destroy();
      if (out) {
        // The descriptor must be closed first, or a still-pending open could recreate the file
        // after we removed it.
        await closed(out);
        await rm(tempPath, { force: true });
      }
      throw err;
    } finally {
      detach();
    }
  }

  async open(key: string): Promise<NodeJS.ReadableStream> {
    const path = this.pathFor(key);
    // Opening the descriptor up front turns "absent" into a rejection here rather than an
    // 'error' event on a stream the caller may already have started sending to a client.
    try {
      const handle = await open(path, 'r');
      return handle.createReadStream(); // closes the handle when the stream ends or is destroyed
    } catch (err) {
      if (isErrno(err, 'ENOENT')) throw notFound('File content', key);
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    await rm(this.pathFor(key), { force: true });
  }

  private pathFor(key: string): string {
    assertSafeKey(key);
    return join(this.root, key);
  }
}

/**
 * Keys are opaque ids, but they end up in a path: anything that could climb out of `root`, name a
 * directory, or shadow a temporary file is refused.
 */
export function assertSafeKey(key: string): void {
  const unsafe = key.length === 0 || key.length > 200 || key.startsWith('.') || key.includes('..') || /[/\\\0]/.test(key);
  if (unsafe) throw badRequest(`Invalid storage key '${key}'`);
}

/**
 * Pipes source into meter and fails the meter if the source errors or is destroyed mid-way (which
 * would otherwise leave it waiting for an end that never comes). Unlike `pipeline`, this never
 * destroys the source: on failure `pipe` merely detaches from it. Returns the undo.
 */
export function feedWithoutOwning(source: NodeJS.ReadableStream, meter: ByteMeter): () => void {
  const stopWatching = finished(source, { writable: false }, (err) => {
    if (err) meter.destroy(err);
  });
  // The meter can fail (too large, source error) before anyone else listens; pipeline picks the
  // error up from the stream's state later, so here it only must not go unhandled.
  meter.on('error', () => undefined);
  source.pipe(meter);
  return () => {
    stopWatching();
    source.unpipe(meter);
  };
}

function closed(stream: WriteStream): Promise<void> {
  if (stream.closed) return Promise.resolve();
  return new Promise((resolve) => stream.once('close', () => resolve()));
}

function isErrno(err: unknown, code: string): boolean {
  return errnoCode(err) === code;
}
