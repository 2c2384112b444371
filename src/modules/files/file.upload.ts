import { badRequest, GatewayError } from '../../errors';
import { fileTooLarge } from '../../storage/file-store';

/**
 * Glue between graphql-upload-minimal's uploads and FileService: its errors become the gateway's
 * (413 as the REST face words it, a hang-up as `upload_aborted`), and a truncated file never
 * passes for a complete one.
 */

interface UploadHttpError {
  status?: number;
  message?: string;
}

export function fromUploadError(err: unknown, maxBytes: number): unknown {
  if (err instanceof GatewayError || !(err instanceof Error)) return err;
  const status = (err as UploadHttpError).status;
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
  const readable = stream as NodeJS.ReadableStream & { truncated?: boolean; destroy?: (err: Error) => void };
  const fail = () => readable.destroy?.(fileTooLarge(maxBytes));
  if (readable.truncated) fail();
  else readable.once('limit', fail);
}

/** After a failure, read the rest of the file to nowhere so the request can finish and be answered. */
export function drain(stream: NodeJS.ReadableStream | undefined): void {
  const readable: (NodeJS.ReadableStream & { destroyed?: boolean }) | undefined = stream;
  if (readable && !readable.destroyed) {
    readable.on('error', () => undefined);
    readable.resume();
  }
}
