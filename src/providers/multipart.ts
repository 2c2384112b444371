/**
 * A multipart/form-data request body generated piece by piece (the parts' headers, then the file's
 * own stream), so a large dataset never sits in memory. Fields known up front go first; fields a
 * pass-through upload learns only after the file (the OpenAI SDK sends `purpose` last) follow it.
 * With every size known the exact Content-Length is declared, otherwise the body goes chunked.
 * A failure on our side (unreadable content, a size that differs from the declared one, a late field
 * refused) is reported as such rather than as the provider's: the HTTP client rewraps errors thrown
 * by a body stream into an opaque socket error.
 */
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { GatewayError, invalidField } from '../errors';

export interface FormFile {
  /** The part's name, e.g. `file`. */
  field: string;
  filename: string;
  /** The exact size of what `open()` yields, when known: declared, and checked while sending. */
  bytes?: number;
  open: () => Readable;
  /** Told how many bytes of the file were sent, once all were. */
  sent?: (bytes: number) => void;
}

export interface Form {
  /** Text fields sent before the file. */
  fields: Readonly<Record<string, string>>;
  file: FormFile;
  /** Text fields known only once the file has been read: sent after it. */
  after?: Promise<Readonly<Record<string, string>>>;
}

/** What the caller does with the body: send it with these headers (content type, and length when known). */
export type FormSender<T> = (body: Readable, headers: Record<string, string>) => Promise<T>;

/** Sends `form` through `send`, streamed; a failure of our own content wins over the transport's rewrapped error. */
export async function sendMultipart<T>(form: Form, send: FormSender<T>): Promise<T> {
  const parts = new Parts(`----gateway-${randomBytes(16).toString('hex')}`);
  const headers: Record<string, string> = { 'content-type': `multipart/form-data; boundary=${parts.boundary}` };
  const lead = Buffer.concat([...Object.entries(form.fields).map(([name, value]) => parts.field(name, value)), parts.fileHead(form.file)]);
  if (!form.after && form.file.bytes !== undefined) headers['content-length'] = String(lead.length + form.file.bytes + parts.end().length);
  const report: { failure?: GatewayError } = {};
  try {
    return await send(Readable.from(body(parts, lead, form, report)), headers);
  } catch (err) {
    throw report.failure ?? err;
  }
}

class Parts {
  constructor(readonly boundary: string) {}

  /** A line break in a value would let it forge extra parts. */
  field(name: string, value: string): Buffer {
    if (/[\r\n]/.test(value)) throw invalidField(name, 'must be a single line');
    return Buffer.from(`--${this.boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`);
  }

  fileHead(file: FormFile): Buffer {
    const disposition = `form-data; name="${file.field}"; filename="${quoteFilename(file.filename)}"`;
    return Buffer.from(`--${this.boundary}\r\nContent-Disposition: ${disposition}\r\nContent-Type: application/octet-stream\r\n\r\n`);
  }

  /** Ends the file part and closes the body, after any fields that follow the file. */
  end(after: Buffer = Buffer.alloc(0)): Buffer {
    return Buffer.concat([Buffer.from('\r\n'), after, Buffer.from(`--${this.boundary}--\r\n`)]);
  }
}

async function* body(parts: Parts, lead: Buffer, form: Form, report: { failure?: GatewayError }): AsyncGenerator<Buffer> {
  yield lead;
  yield* fileContent(form.file, report);
  try {
    const after = form.after ? await form.after : {};
    yield parts.end(Buffer.concat(Object.entries(after).map(([name, value]) => parts.field(name, value))));
  } catch (err) {
    report.failure ??= err instanceof GatewayError ? err : new GatewayError('internal', 'The upload is missing a field');
    throw err;
  }
}

/** The file's bytes, checked against its declared size. */
async function* fileContent(file: FormFile, report: { failure?: GatewayError }): AsyncGenerator<Buffer> {
  const mismatch = (sent: number) => {
    report.failure = new GatewayError('internal', `Upload of '${file.filename}' yielded ${sent} bytes, expected ${file.bytes}`);
    return report.failure;
  };
  let sent = 0;
  const expected = file.bytes ?? Infinity;
  try {
    // Node types a stream's chunks as `any`: they are Buffers, or strings from a stream with an encoding.
    for await (const chunk of file.open() as AsyncIterable<Buffer | string>) {
      const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      sent += buf.length;
      if (sent > expected) throw mismatch(sent);
      yield buf;
    }
  } catch (err) {
    // Our own content failed (a vanished temp file, a disk error, a client that went away): not the provider's fault.
    report.failure ??= err instanceof GatewayError ? err : new GatewayError('internal', `Could not read upload content for '${file.filename}'`);
    throw err;
  }
  if (file.bytes !== undefined && sent !== file.bytes) throw mismatch(sent);
  file.sent?.(sent);
}

/** Multipart filenames escape quotes and line breaks the way browsers do (WHATWG form encoding). */
const quoteFilename = (name: string) => name.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
