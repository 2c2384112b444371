/**
 * An upload with its exact byte count. Fireworks' signed-URL path must declare the size before the
 * first byte is sent, and a pass-through upload (client mode) arrives as a stream of unknown length
 * whose purpose may follow the file: such an upload is first streamed to a temporary file under the
 * OS temp dir (constant memory), its size read there, and the file removed once the upload is done.
 * A hosted job's upload knows its size and is sent straight from the gateway's store.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { GatewayError } from '../../errors';
import type { UploadInput } from '../types';

export interface SizedContent {
  bytes: number;
  open: () => Readable;
  purpose: string;
}

/** Runs `use` with the upload's exact size and its purpose, spooling it first when either is not known yet. */
export async function withExactSize<T>(input: UploadInput, use: (content: SizedContent) => Promise<T>): Promise<T> {
  if (input.bytes !== undefined && typeof input.purpose === 'string') return use({ bytes: input.bytes, open: input.open, purpose: input.purpose });
  const dir = await mkdtemp(join(tmpdir(), 'gw-fireworks-upload-'));
  try {
    const path = join(dir, 'content');
    await pipeline(input.open(), createWriteStream(path)).catch((err: unknown) => {
      throw err instanceof GatewayError ? err : new GatewayError('internal', `Could not read upload content for '${input.filename}'`, { cause: err });
    });
    const { size } = await stat(path);
    // A pass-through upload's purpose is known once its body has been read, which the spool did.
    return await use({ bytes: size, open: () => createReadStream(path), purpose: await input.purpose });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
