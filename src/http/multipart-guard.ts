import type { Readable } from 'node:stream';
import type { Busboy } from 'busboy';
import { GatewayError } from '../errors';
import { formatByteSize } from '../storage/file-store';

/**
 * Limits of a multipart request beyond busboy's own (one file, its size, fields and their size): busboy
 * reads parts without a name, extra fields and the bytes between parts to the end of the body without
 * reporting them, so a request of nothing but empty parts, or a file of a few bytes followed by hundreds
 * of megabytes of junk, would be read whole. Both faces (REST uploads and GraphQL's multipart requests)
 * watch their parser with `guardMultipart`.
 */
export interface MultipartLimits {
  /** Parts per request, whatever they are. */
  maxParts: number;
  /** Bytes of the body that are not the file's content: fields, part headers, anything between parts. */
  maxNonFileBytes: number;
}

/** The boundary of a multipart/form-data request, or null (the parser then refuses the request itself). */
function boundaryOf(contentType: string | undefined): string | null {
  const match = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType ?? '');
  return match ? (match[1] ?? match[2]) : null;
}

/**
 * Counts the parts of `req` (by their delimiters, `\r\n--boundary`, in the raw bytes) and the bytes
 * read while no file part is open, and calls `fail` once either goes past its limit. A file part is
 * open from the parser's `file` event until its stream ends, so the count is per chunk of the body:
 * it can be off by the chunk a file starts or ends in (64 KiB), never by more.
 */
export function guardMultipart(
  req: Readable & { headers: Record<string, string | string[] | undefined> },
  parser: Busboy,
  limits: MultipartLimits,
  fail: (err: GatewayError) => void,
): void {
  const contentType = req.headers['content-type'];
  const boundary = boundaryOf(typeof contentType === 'string' ? contentType : undefined);
  if (boundary === null) return;
  const delimiter = Buffer.from(`\r\n--${boundary}`);
  // The body's first delimiter has no line break before it: start as if one had been read.
  let tail: Buffer = Buffer.from('\r\n');
  let delimiters = 0;
  let nonFileBytes = 0;
  let fileOpen = false;
  let failed = false;

  parser.on('file', (_name: string, stream: Readable) => {
    fileOpen = true;
    const closed = () => (fileOpen = false);
    stream.once('end', closed).once('close', closed);
  });
  const onData = (chunk: Buffer) => {
    if (failed) return;
    if (!fileOpen) nonFileBytes += chunk.length;
    // A delimiter may straddle two chunks: the previous chunk's last bytes are searched with this one's first.
    const keep = delimiter.length - 1;
    const seam = Buffer.concat([tail, chunk.subarray(0, keep)]);
    delimiters += occurrences(seam, delimiter) + occurrences(chunk, delimiter);
    tail = chunk.length >= keep ? chunk.subarray(chunk.length - keep) : seam.subarray(Math.max(0, seam.length - keep));
    // Every delimiter but the closing one starts a part.
    if (delimiters - 1 > limits.maxParts) {
      failed = true;
      fail(new GatewayError('payload_too_large', `A multipart request may have at most ${limits.maxParts} parts`, { code: 'too_many_parts' }));
    } else if (nonFileBytes > limits.maxNonFileBytes) {
      failed = true;
      const size = formatByteSize(limits.maxNonFileBytes);
      fail(new GatewayError('payload_too_large', `A multipart request may carry at most ${size} besides the file`, { code: 'multipart_too_large' }));
    }
  };
  req.on('data', onData);
  parser.once('close', () => req.removeListener('data', onData));
}

function occurrences(haystack: Buffer, needle: Buffer): number {
  let count = 0;
  for (let at = haystack.indexOf(needle); at >= 0; at = haystack.indexOf(needle, at + needle.length)) count++;
  return count;
}
