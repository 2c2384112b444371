import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import busboy, { type Busboy, type FieldInfo, type FileInfo } from 'busboy';
import { asError, badRequest, GatewayError } from '../errors';
import { fileTooLarge, formatByteSize } from '../storage/file-store';
import { guardMultipart, type MultipartLimits } from './multipart-guard';
import { invalidText, isStorableText } from '../validation/text';

/**
 * Reads a multipart/form-data upload with exactly one file part, streaming the file to a consumer
 * as it arrives.
 *
 * Text fields may come before or after the file (clients such as the OpenAI SDK send `purpose`
 * last), so the file cannot wait for them: `onFile` starts as soon as the file part does, and the
 * caller judges the fields once the promise resolves, keeping or deleting what `onFile` stored.
 * When the upload as a whole fails after `onFile` succeeded, `onDiscard` gets its result so
 * nothing is left behind.
 *
 * On failure the file stream handed to `onFile` is destroyed with the error (so a store can
 * clean up), reading of the request stops and the rest of its body is discarded so the caller's
 * error response can still reach the client. The promise settles only after `onFile` (and
 * `onDiscard`) have finished, so cleanup is complete by the time the caller answers.
 */

export interface UploadedFile {
  /** As sent by the client, without any directory part; '' when the part had none. */
  filename: string;
  mimeType: string;
  stream: Readable;
}

export interface MultipartUploadOptions<T> {
  maxFileBytes: number;
  /** Parts and bytes besides the file (multipart-guard.ts). */
  limits: MultipartLimits;
  /** Names of the text fields the endpoint accepts; any other field is refused. */
  allowedFields: string[];
  /** Name of the file part. Default `file`. */
  fileField?: string;
  /** Max bytes of one text field's value. Default 16 KiB. */
  fieldLimit?: number;
  onFile: (file: UploadedFile) => Promise<T>;
  onDiscard?: (file: T) => Promise<void> | void;
  /**
   * The parser has read the whole body: every field is known (a field sent after the file, too),
   * while `onFile` may still be finishing. A pass-through upload waits for its `purpose` here.
   */
  onFields?: (fields: Readonly<Record<string, string>>) => void;
}

export interface MultipartUpload<T> {
  fields: Record<string, string>;
  file: T;
}

const DEFAULT_FIELD_LIMIT = 16 * 1024;

export function receiveMultipartUpload<T>(req: IncomingMessage, opts: MultipartUploadOptions<T>): Promise<MultipartUpload<T>> {
  return new Promise((resolve, reject) => {
    new UploadReceiver(req, opts, resolve, reject).start();
  });
}

function isMultipartFormData(contentType: string | undefined): boolean {
  const mediaType = (contentType ?? '').split(';')[0].trim().toLowerCase();
  return mediaType === 'multipart/form-data';
}

function clientAborted(): GatewayError {
  return badRequest('The upload was interrupted before it completed', 'file', 'upload_aborted');
}

class UploadReceiver<T> {
  private readonly fileField: string;
  private readonly allowedFields: Set<string>;
  private readonly fields: Record<string, string> = {};
  private parser: Busboy | null = null;
  private fileStream: Readable | null = null;
  /** What `onFile` returned, once a file part has started. */
  private stored: Promise<T> | null = null;
  private failed = false;
  /** Resolved: later request errors (a socket reset while the caller answers) are no longer ours. */
  private succeeded = false;

  constructor(
    private readonly req: IncomingMessage,
    private readonly opts: MultipartUploadOptions<T>,
    private readonly resolve: (upload: MultipartUpload<T>) => void,
    private readonly reject: (err: unknown) => void,
  ) {
    this.fileField = opts.fileField ?? 'file';
    this.allowedFields = new Set(opts.allowedFields);
  }

  start(): void {
    if (!isMultipartFormData(this.req.headers['content-type'])) {
      this.fail(new GatewayError('unsupported_media_type', 'Content-Type must be multipart/form-data', { code: 'unsupported_media_type' }));
      return;
    }
    let parser: Busboy;
    try {
      parser = this.createParser();
    } catch (err) {
      this.fail(badRequest(`Malformed multipart request: ${asError(err).message}`, null, 'invalid_multipart'));
      return;
    }
    this.parser = parser;
    this.watchRequest();
    this.req.pipe(parser);
  }

  private createParser(): Busboy {
    const fieldLimit = this.opts.fieldLimit ?? DEFAULT_FIELD_LIMIT;
    const parser = busboy({
      headers: this.req.headers,
      defParamCharset: 'utf8', // browsers and SDKs send UTF-8 filenames
      limits: {
        // busboy reports the limit on *reaching* fileSize; one byte more makes maxFileBytes itself allowed.
        fileSize: this.opts.maxFileBytes + 1,
        files: 1,
        fieldSize: fieldLimit,
        // One past the allowed set: an extra field is necessarily unknown or repeated and gets named below.
        fields: this.allowedFields.size + 1,
      },
    });
    parser.on('file', (name: string, stream: Readable, info: FileInfo) => this.onFilePart(name, stream, info));
    parser.on('field', (name: string, value: string, info: FieldInfo) => this.onField(name, value, info));
    parser.on('filesLimit', () => this.fail(badRequest('Only one file may be uploaded per request', this.fileField, 'too_many_files')));
    parser.on('fieldsLimit', () => this.fail(badRequest('Too many form fields', null, 'too_many_fields')));
    parser.on('error', (err: Error) => this.fail(badRequest(`Malformed multipart body: ${err.message}`, null, 'invalid_multipart')));
    parser.on('close', () => void this.complete());
    guardMultipart(this.req, parser, this.opts.limits, (err) => this.fail(err));
    return parser;
  }

  /** A client that goes away mid-body never lets the parser finish; notice it ourselves. */
  private watchRequest(): void {
    this.req.on('error', () => this.fail(clientAborted()));
    this.req.on('close', () => {
      if (!this.req.complete) this.fail(clientAborted());
    });
  }

  private onFilePart(name: string, stream: Readable, info: FileInfo): void {
    // Whoever consumes the stream observes errors through its own listeners; this one only keeps
    // an error we inject (see fail) from crashing the process if the consumer is not listening yet.
    stream.on('error', () => undefined);
    if (this.failed) {
      stream.resume();
      return;
    }
    if (name !== this.fileField) {
      stream.resume();
      this.fail(badRequest(`Unexpected file field '${name}'`, name, 'unknown_field'));
      return;
    }
    this.fileStream = stream;
    stream.once('limit', () => this.fail(fileTooLarge(this.opts.maxFileBytes)));
    this.stored = this.callOnFile({ filename: info.filename ?? '', mimeType: info.mimeType, stream });
    this.stored.catch((err: unknown) => this.fail(err));
  }

  /** Async so that a synchronous throw in `onFile` becomes a rejection like any other. */
  private async callOnFile(file: UploadedFile): Promise<T> {
    return this.opts.onFile(file);
  }

  private onField(name: string, value: string, info: FieldInfo): void {
    if (this.failed) return;
    const problem = this.fieldProblem(name, info);
    if (problem !== null) {
      this.fail(badRequest(problem, name, 'invalid_field'));
      return;
    }
    if (!isStorableText(value)) {
      this.fail(invalidText(name));
      return;
    }
    this.fields[name] = value;
  }

  private fieldProblem(name: string, info: FieldInfo): string | null {
    if (name === this.fileField) return `'${name}' must be a file, not a text field`;
    if (!this.allowedFields.has(name)) return `Unknown field '${name}'`;
    if (Object.hasOwn(this.fields, name)) return `Field '${name}' was given more than once`;
    if (info.valueTruncated) {
      return `Field '${name}' is too long (at most ${formatByteSize(this.opts.fieldLimit ?? DEFAULT_FIELD_LIMIT)})`;
    }
    return null;
  }

  /** The parser has seen the whole body and every file stream has ended. */
  private async complete(): Promise<void> {
    if (this.failed) return;
    this.opts.onFields?.({ ...this.fields });
    if (this.stored === null) {
      this.fail(badRequest(`'${this.fileField}' is required: the file to upload`, this.fileField, 'missing_file'));
      return;
    }
    let file: T;
    try {
      file = await this.stored;
    } catch (err) {
      this.fail(err);
      return;
    }
    // A failure while we waited has already arranged for the file to be discarded.
    if (this.failed) return;
    this.succeeded = true;
    this.resolve({ fields: { ...this.fields }, file });
  }

  /** First failure wins; later ones are consequences of it. */
  private fail(err: unknown): void {
    if (this.failed || this.succeeded) return;
    this.failed = true;
    const stream = this.fileStream;
    if (stream !== null && !stream.destroyed && !stream.readableEnded) stream.destroy(asError(err));
    // We may be inside one of busboy's own event emissions, and it keeps using its state after
    // the listener returns; tearing the parser down right now would pull that state from under it.
    process.nextTick(() => this.stopReading());
    void this.settleAfterCleanup(err);
  }

  private stopReading(): void {
    const parser = this.parser;
    if (parser !== null) {
      this.req.unpipe(parser);
      parser.destroy();
    }
    this.req.resume();
  }

  private async settleAfterCleanup(err: unknown): Promise<void> {
    if (this.stored !== null) {
      try {
        await this.discard(await this.stored);
      } catch {
        // onFile failed: it has cleaned up after itself (the store removes its temporary file).
      }
    }
    this.reject(err);
  }

  private async discard(file: T): Promise<void> {
    try {
      await this.opts.onDiscard?.(file);
    } catch {
      // Reporting the upload's own failure matters more than a failed cleanup of its leftovers.
    }
  }
}
