/**
 * Dataset conversion for providers whose training format is not OpenAI's chat JSONL (Bedrock,
 * Vertex AI): the upload is rewritten line by line as it streams — only the line being read is
 * held in memory — and a line that cannot be converted fails the upload naming it, never dropped.
 */
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { GatewayError } from '../errors';

/** One OpenAI chat JSONL example converted to the provider's format; throw a {@link DatasetLineError} to refuse it. */
export type LineConverter = (example: unknown, lineNumber: number) => unknown;

/** Why a line cannot be converted: reported as `line N: <reason>`. */
export class DatasetLineError extends Error {}

const NEWLINE = 0x0a;
const MAX_LINE_BYTES = 4 * 1024 * 1024;

/** A stream of `source` with every non-blank JSON line passed through `convert`; it fails with a 400 naming the line. */
export function convertJsonl(source: Readable, convert: LineConverter): Readable {
  let pending = Buffer.alloc(0);
  let lineNumber = 0;
  const convertLine = (line: Buffer): string | null => {
    lineNumber++;
    const text = line
      .toString('utf8')
      .replace(/^\ufeff/, '')
      .trim();
    if (!text) return null;
    let example: unknown;
    try {
      example = JSON.parse(text);
    } catch {
      throw lineError(lineNumber, 'invalid JSON');
    }
    try {
      return `${JSON.stringify(convert(example, lineNumber))}\n`;
    } catch (err) {
      throw lineError(lineNumber, err instanceof DatasetLineError ? err.message : 'cannot be converted');
    }
  };
  const converter = new Transform({
    transform(chunk: Buffer, _encoding, callback: TransformCallback) {
      try {
        pending = Buffer.concat([pending, chunk]);
        let newline: number;
        while ((newline = pending.indexOf(NEWLINE)) >= 0) {
          const out = convertLine(pending.subarray(0, newline));
          pending = pending.subarray(newline + 1);
          if (out !== null) this.push(out);
        }
        if (pending.length > MAX_LINE_BYTES) throw lineError(lineNumber + 1, `longer than ${MAX_LINE_BYTES} bytes`);
        callback();
      } catch (err) {
        callback(err instanceof Error ? err : new Error(String(err)));
      }
    },
    flush(callback: TransformCallback) {
      try {
        const out = pending.length ? convertLine(pending) : null;
        callback(null, out ?? undefined);
      } catch (err) {
        callback(err instanceof Error ? err : new Error(String(err)));
      }
    },
  });
  source.on('error', (err) => converter.destroy(err));
  return source.pipe(converter);
}

const lineError = (line: number, reason: string) =>
  new GatewayError('invalid_request', `The dataset cannot be converted to the provider's format: line ${line}: ${reason}`, {
    path: 'file',
    code: 'invalid_dataset',
  });

/** The GatewayError a conversion failed with, when `err` (or what caused it) is one. */
export function conversionFailure(err: unknown): GatewayError | undefined {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; depth++) {
    if (e instanceof GatewayError && e.code === 'invalid_dataset') return e;
    e = e.cause;
  }
  return undefined;
}

/** OpenAI's batch request line (`custom_id`, `url`, `body`): batch input, never a training example. */
const isBatchRequestLine = (example: unknown): boolean =>
  typeof example === 'object' && example !== null && 'custom_id' in example && 'url' in example && 'body' in example;

/**
 * `make`'s conversion for training examples, OpenAI batch lines left as they are: a client-mode
 * batch upload (stored as written, read back at batch create) whose purpose comes after the file
 * (late-purpose.ts) is known by its lines. The converter is made on the first line that needs it, so
 * a batch upload needs no base model.
 */
export function keepingBatchLines(make: () => LineConverter): LineConverter {
  let convert: LineConverter | undefined;
  return (example, lineNumber) => (isBatchRequestLine(example) ? example : (convert ??= make())(example, lineNumber));
}
