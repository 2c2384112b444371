/**
 * POST /files as multipart/form-data, streamed: the body is generated piece by piece (the parts'
 * headers, the file's own stream) so a 512 MB dataset never sits in memory. A purpose known up
 * front goes first and, with a declared size, the exact Content-Length is sent; a purpose that a
 * pass-through upload learns only after the file (the OpenAI SDK sends it last) follows the file,
 * and the body goes chunked.
 */
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { GatewayError, invalidField } from '../../errors';
import type { ProviderFile, UploadInput } from '../types';
import { compatibleRequest, type OpenAICompatibleConnection } from './connection';
import { toFile, type OpenAIFile } from './mappers';

export async function uploadFile(conn: OpenAICompatibleConnection, input: UploadInput): Promise<ProviderFile> {
  const boundary = `----gateway-${randomBytes(16).toString('hex')}`;
  const parts = new MultipartParts(boundary);
  const headers: Record<string, string> = { 'content-type': `multipart/form-data; boundary=${boundary}` };
  if (typeof input.purpose === 'string' && input.bytes !== undefined) {
    headers['content-length'] = String(
      parts.field('purpose', checkedPurpose(input.purpose)).length + parts.fileHead(input.filename).length + input.bytes + parts.end().length,
    );
  }
  // The HTTP client rewraps errors thrown by a body stream, so the body reports its own failure here.
  const report: { failure?: GatewayError } = {};
  try {
    const body = Readable.from(multipartBody(parts, input, report));
    return toFile(await compatibleRequest<OpenAIFile>(conn, { method: 'POST', path: '/files', body, headers, upload: true }));
  } catch (err) {
    throw report.failure ?? err;
  }
}

class MultipartParts {
  constructor(private readonly boundary: string) {}

  field(name: string, value: string): Buffer {
    return Buffer.from(`--${this.boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`);
  }

  fileHead(filename: string): Buffer {
    return Buffer.from(
      `--${this.boundary}\r\nContent-Disposition: form-data; name="file"; filename="${quoteFilename(filename)}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    );
  }

  /** Ends the file part and closes the body, after any field that follows the file. */
  end(after: Buffer = Buffer.alloc(0)): Buffer {
    return Buffer.concat([Buffer.from('\r\n'), after, Buffer.from(`--${this.boundary}--\r\n`)]);
  }
}

/** A line break in a field value would let it forge extra multipart parts. */
function checkedPurpose(purpose: string): string {
  if (/[\r\n]/.test(purpose)) throw invalidField('purpose', 'must be a single line');
  return purpose;
}

async function* multipartBody(parts: MultipartParts, input: UploadInput, report: { failure?: GatewayError }): AsyncGenerator<Buffer> {
  const first = typeof input.purpose === 'string';
  if (typeof input.purpose === 'string') yield parts.field('purpose', checkedPurpose(input.purpose));
  yield parts.fileHead(input.filename);
  yield* fileContent(input, report);
  try {
    yield parts.end(first ? undefined : parts.field('purpose', checkedPurpose(await input.purpose)));
  } catch (err) {
    report.failure ??= err instanceof GatewayError ? err : new GatewayError('internal', 'The upload has no purpose');
    throw err;
  }
}

async function* fileContent(input: UploadInput, report: { failure?: GatewayError }): AsyncGenerator<Buffer> {
  // A size mismatch would otherwise surface as an opaque socket error from the HTTP client.
  const mismatch = (sent: number) => {
    report.failure = new GatewayError('internal', `Upload of '${input.filename}' yielded ${sent} bytes, expected ${input.bytes}`);
    return report.failure;
  };
  let sent = 0;
  const expected = input.bytes ?? Infinity;
  try {
    // Node types a stream's chunks as `any`: they are Buffers, or strings from a stream with an encoding.
    for await (const chunk of input.open() as AsyncIterable<Buffer | string>) {
      const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      sent += buf.length;
      if (sent > expected) throw mismatch(sent);
      yield buf;
    }
  } catch (err) {
    // Our own content failed (a vanished temp file, a disk error, a client that went away): not the provider's fault.
    report.failure ??= err instanceof GatewayError ? err : new GatewayError('internal', `Could not read upload content for '${input.filename}'`);
    throw err;
  }
  if (input.bytes !== undefined && sent !== input.bytes) throw mismatch(sent);
}

/** Multipart filenames escape quotes and line breaks the way browsers do (WHATWG form encoding). */
const quoteFilename = (name: string) => name.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
