import { Readable } from 'node:stream';
import { badRequest, GatewayError } from '../../errors';
import { fileTooLarge } from '../../storage/file-store';

/**
 * Glue between graphql-upload-minimal's uploads and FileService: its errors become the gateway's
 * (413 as the REST face words it, a hang-up as `upload_aborted`), and a truncated file never
 * passes for a complete one.
 */

export function fromUploadError(err: unknown, maxBytes: number): unknown {
  if (err instanceof GatewayError || !(err instanceof Error)) return err;
  const status = 'status' in err && typeof err.status === 'number' ? err.status : undefined;
  if (status === 413) return fileTooLarge(maxBytes);
  if (status === 499) return badRequest('The upload was interrupted before it completed', 'file', 'upload_aborted');
  if (status !== undefined && status >= 400 && status < 500) return badRequest(err.message, 'file', 'invalid_upload');
  return err;
}

/**
 * busboy stops a file at the size limit and *ends* its stream normally (flagging it truncated),
 * so the store would keep the first bytes as if they were the file. Failing the stream on that
 * signal makes the store discard it instead.
 */
export function failOnTruncation(stream: NodeJS.ReadableStream, maxBytes: number): void {
  const fail = () => (stream instanceof Readable ? stream.destroy(fileTooLarge(maxBytes)) : undefined);
  if ('truncated' in stream && stream.truncated === true) fail();
  else stream.once('limit', fail);
}

/** After a failure, read the rest of the file to nowhere so the request can finish and be answered. */
export function drain(stream: NodeJS.ReadableStream | undefined): void {
  const readable: (NodeJS.ReadableStream & { destroyed?: boolean }) | undefined = stream;
  if (readable && !readable.destroyed) {
    readable.on('error', () => undefined);
    readable.resume();
  }
}
