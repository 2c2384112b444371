/** JSON Lines both ways for batch services: the requests written as a provider's input lines, its result files read back. */
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { GatewayError } from '../errors';
import type { BatchRequest } from './batch';

/** The requests as JSON Lines, one provider line each (`translate`): the content `upload` streams to a provider. */
export function jsonLines(requests: () => AsyncIterable<BatchRequest>, translate: (request: BatchRequest) => unknown): () => Readable {
  return () =>
    Readable.from(
      (async function* () {
        for await (const request of requests()) yield Buffer.from(`${JSON.stringify(translate(request))}\n`);
      })(),
    );
}

/** Each non-blank line of `stream` as JSON; a line that is not JSON is the provider's fault (502). */
export async function* jsonLinesOf(stream: Readable, provider: string): AsyncGenerator<Record<string, unknown>> {
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  let number = 0;
  try {
    for await (const line of lines) {
      number++;
      if (line.trim() === '') continue;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        throw new GatewayError('provider', `${provider} returned a batch result file whose line ${number} is not JSON`, { status: 502 });
      }
      if (typeof value !== 'object' || value === null || Array.isArray(value))
        throw new GatewayError('provider', `${provider} returned a batch result file whose line ${number} is not a JSON object`, { status: 502 });
      yield value as Record<string, unknown>;
    }
  } finally {
    lines.close();
    stream.destroy();
  }
}
