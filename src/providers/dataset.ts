/**
 * Dataset conversion for providers whose training format is not OpenAI's chat JSONL (Bedrock,
 * Vertex AI): the upload is rewritten line by line as it streams — only the line being read is
 * held in memory — and a line that cannot be converted fails the upload naming it, never dropped.
 */
import { Readable, Transform, type TransformCallback } from 'node:stream';
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

/** Whether the first line of `head` is OpenAI's batch request line (`custom_id`, `url`, `body`): batch input, never training examples. */
function isBatchFile(head: Buffer): boolean {
  const text = head
    .toString('utf8')
    .replace(/^\ufeff/, '')
    .trimStart();
  try {
    const first: unknown = JSON.parse(text.slice(0, text.indexOf('\n') < 0 ? undefined : text.indexOf('\n')));
    return typeof first === 'object' && first !== null && 'custom_id' in first && 'url' in first && 'body' in first;
  } catch {
    return false;
  }
}

/**
 * `source` converted by `make`'s converter, unless its first line says it is an OpenAI batch file:
 * that passes as written (a client-mode batch upload, read back and checked at batch create), so
 * that a purpose coming after the file (late-purpose.ts) needs no guess. The converter is made only
 * for a training file, so a batch upload needs no base model.
 */
export function convertUnlessBatch(source: Readable, make: () => LineConverter): Readable {
  return Readable.from(
    (async function* () {
      const chunks = source[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
      let head = Buffer.alloc(0);
      let ended = false;
      // Enough of the file to hold its first line (or all of it).
      while (head.toString('utf8').trim() === '' || !/\S[^\n]*\n/.test(head.toString('utf8'))) {
        if (head.length > MAX_LINE_BYTES) break;
        const next = await chunks.next();
        if (next.done) {
          ended = true;
          break;
        }
        head = Buffer.concat([head, Buffer.from(next.value)]);
      }
      const rest = Readable.from(
        (async function* () {
          yield head;
          if (ended) return;
          for (let next = await chunks.next(); !next.done; next = await chunks.next()) yield Buffer.from(next.value);
        })(),
      );
      yield* isBatchFile(head) ? rest : convertJsonl(rest, make());
    })(),
  );
}
