import { createHash, type Hash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { GatewayError } from '../errors';

export interface PutOptions {
  /** Upper bound on the stored size; exceeding it fails the put with `payload_too_large`. */
  maxBytes: number;
}

export interface StoredObject {
  bytes: number;
  /** Lowercase hex SHA-256 of the stored bytes. */
  sha256: string;
}

/**
 * Where uploaded file bytes live. Keys are opaque ids chosen by the caller; metadata (filename,
 * purpose, ...) belongs to the database, not here, so an S3-compatible store can slot in later.
 *
 * Contract every implementation keeps:
 * - `put` streams: it never holds the whole object in memory, and it counts and hashes as it goes.
 * - `put` is all-or-nothing: on any failure (source error, premature end, size limit, storage
 *   error) nothing is visible under `key` and no partial/temporary object is left behind, and
 *   an existing object under `key` is replaced only on success.
 * - `put` never destroys `source`: on failure it merely stops reading it. The caller owns the
 *   source (an HTTP request, say) and decides whether to drain it, answer, or tear it down.
 * - `open` rejects with a `not_found` GatewayError when nothing is stored under `key`.
 * - `delete` is idempotent: deleting a missing key succeeds.
 */
export interface FileStore {
  put(key: string, source: NodeJS.ReadableStream, opts: PutOptions): Promise<StoredObject>;
  open(key: string): Promise<NodeJS.ReadableStream>;
  delete(key: string): Promise<void>;
}

const MB = 1024 * 1024;

/** "512 MB" for whole megabytes, otherwise exact bytes, so small test limits read sensibly. */
export function formatByteSize(bytes: number): string {
  return bytes >= MB && bytes % MB === 0 ? `${bytes / MB} MB` : `${bytes} bytes`;
}

/** The one "file too big" error, shared by the store and the multipart reader so clients see one message. */
export function fileTooLarge(maxBytes: number): GatewayError {
  return new GatewayError('payload_too_large', `File exceeds the maximum size of ${formatByteSize(maxBytes)}`, {
    param: 'file',
    code: 'file_too_large',
  });
}

/**
 * A pass-through that counts and hashes what flows through it and fails the moment the total
 * would pass `maxBytes`, before the offending chunk reaches storage. Store implementations put it
 * between the source and their sink, which keeps size accounting identical across backends.
 */
export class ByteMeter extends Transform {
  private readonly hash: Hash = createHash('sha256');
  private count = 0;
  private digest: string | undefined;

  constructor(private readonly maxBytes: number) {
    super();
  }

  override _transform(chunk: Buffer | string, _encoding: BufferEncoding, callback: TransformCallback): void {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    if (this.count + buf.length > this.maxBytes) {
      callback(fileTooLarge(this.maxBytes));
      return;
    }
    this.count += buf.length;
    this.hash.update(buf);
    callback(null, buf);
  }

  /** Only meaningful once the stream has ended successfully. */
  result(): StoredObject {
    // A Hash can be digested only once; keep the answer so repeated calls agree.
    this.digest ??= this.hash.digest('hex');
    return { bytes: this.count, sha256: this.digest };
  }
}
