/**
 * Server-sent events as `streamGenerateContent?alt=sse` sends them: the `data:` lines of each event
 * (joined by newlines when there are several), yielded as each event completes. Other fields and
 * comments are ignored; an event cut off by the end of the stream is still delivered.
 */
import type { Readable } from 'node:stream';

export async function* sseData(stream: Readable): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffered = '';
  let data: string[] = [];
  const line = function* (text: string): Generator<string> {
    const value = text.endsWith('\r') ? text.slice(0, -1) : text;
    if (value === '') {
      if (data.length) yield data.join('\n');
      data = [];
    } else if (value.startsWith('data:')) {
      data.push(value.slice(value.startsWith('data: ') ? 6 : 5));
    }
  };
  for await (const chunk of stream) {
    const piece: unknown = chunk;
    if (typeof piece === 'string') buffered += piece;
    else if (piece instanceof Uint8Array) buffered += decoder.decode(piece, { stream: true });
    let newline: number;
    while ((newline = buffered.indexOf('\n')) >= 0) {
      yield* line(buffered.slice(0, newline));
      buffered = buffered.slice(newline + 1);
    }
  }
  yield* line(buffered + decoder.decode());
  yield* line('');
}
