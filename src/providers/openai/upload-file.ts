/**
 * POST /files as multipart/form-data, streamed: the body is generated piece by piece (preamble, the
 * file's own stream, closing boundary) so a 512 MB dataset never sits in memory, and its exact
 * Content-Length is known up front from the declared size, which OpenAI requires for large uploads.
 */
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { badRequest, GatewayError } from '../../errors';
import type { ProviderContext, ProviderFile, UploadInput } from '../types';
import { openaiRequest } from './client';
import { toFile, type OpenAIFile } from './mappers';

export async function uploadFile(ctx: ProviderContext, input: UploadInput): Promise<ProviderFile> {
  // A line break in a field value would let it forge extra multipart parts.
  if (/[\r\n]/.test(input.purpose)) throw badRequest('purpose must be a single line', 'purpose');
  const boundary = `----gateway-${randomBytes(16).toString('hex')}`;
  const head = Buffer.from(
    `--${boundary}\r\n` +
      `Content-Disposition: form-data; name="purpose"\r\n\r\n${input.purpose}\r\n` +
      `--${boundary}\r\n` +
      `Content-Disposition: form-data; name="file"; filename="${quoteFilename(input.filename)}"\r\n` +
      `Content-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);

  // The HTTP client rewraps errors thrown by a body stream, so the body reports its own failure here.
  const body = { failure: undefined as GatewayError | undefined };
  try {
    const file = await openaiRequest<OpenAIFile>(ctx, {
      method: 'POST',
      path: '/files',
      body: Readable.from(multipartBody(head, input, tail, body)),
      headers: {
        'content-type': `multipart/form-data; boundary=${boundary}`,
        'content-length': String(head.length + input.bytes + tail.length),
      },
      upload: true,
    });
    return toFile(file);
  } catch (err) {
    throw body.failure ?? err;
  }
}

async function* multipartBody(
  head: Buffer,
  input: UploadInput,
  tail: Buffer,
  report: { failure?: GatewayError },
): AsyncGenerator<Buffer> {
  yield head;
  // A size mismatch would otherwise surface as an opaque socket error from the HTTP client.
  const mismatch = (sent: number) => {
    const message = `Upload of '${input.filename}' yielded ${sent} bytes, expected ${input.bytes}`;
    report.failure = new GatewayError('internal', message);
    return report.failure;
  };
  let sent = 0;
  try {
    for await (const chunk of input.open()) {
      const buf = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
      sent += buf.length;
      if (sent > input.bytes) throw mismatch(sent);
      yield buf;
    }
  } catch (err) {
    // Our own content failed (a vanished temp file, a disk error): not the provider's fault.
    report.failure ??= new GatewayError('internal', `Could not read upload content for '${input.filename}'`);
    throw err;
  }
  if (sent !== input.bytes) throw mismatch(sent);
  yield tail;
}

/** Multipart filenames escape quotes and line breaks the way browsers do (WHATWG form encoding). */
const quoteFilename = (name: string) => name.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
