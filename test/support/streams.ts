/** Stream helpers for the file-store tests. */
import { createHash } from 'node:crypto';
import { PassThrough } from 'node:stream';

export const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

export async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks);
}

/** A source that yields `chunks`, then fails or vanishes after `afterMs`, as a dropped upload does. */
export function brokenSource(chunks: Buffer[], ending: 'error' | 'destroy', afterMs = 20): PassThrough {
  const source = new PassThrough();
  for (const chunk of chunks) source.write(chunk);
  setTimeout(() => (ending === 'error' ? source.destroy(new Error('connection reset')) : source.destroy()), afterMs);
  return source;
}
