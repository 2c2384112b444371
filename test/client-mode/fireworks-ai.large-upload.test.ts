/**
 * A 200 MB dataset uploaded to Fireworks in client mode, over HTTP, its purpose after the file (as
 * the OpenAI SDK sends it): the gateway learns the exact size by spooling the stream to a temporary
 * file, takes the signed-URL path (above the 150 MB `:upload` limit), declares exactly that size, and
 * PUTs exactly those bytes; memory stays flat throughout (the test's generator, the gateway and the
 * fake share this process, and none of them holds the file), and the temporary file is gone after.
 */
import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { Readable } from 'node:stream';
import { startFakeFireworks } from '../fakes/fireworks-server';
import { gatewayFetch } from '../support/answers';
import { gatewayOnFake } from '../support/gateway';
import { peakGrowth } from '../support/memory';

const KEY = 'fw-large-upload-0123456789';
const ACCOUNT = 'acme-labs';
const SIZE = 200 * 1024 * 1024;
const CHUNK = 64 * 1024;
/**
 * What the test tolerates above the memory held before the upload. The buffers the upload holds are
 * bounded tightly (`arrayBuffers`: a fraction of the file). The resident size, even after a full
 * collection, also counts pages the allocator keeps, the heap earlier test files left in this jest
 * worker and the embedded database's memory (74.8 MB in one full-suite run on 2026-11-28, 135 MB in one
 * on 2026-11-29, the buffers within their bound both times), so its bound only says that the process
 * never held the whole file: less than the file's size, which a buffered upload would reach.
 */
const MAX_RSS_GROWTH = SIZE - 16 * 1024 * 1024;
const MAX_BUFFER_GROWTH = 32 * 1024 * 1024;

const on = gatewayOnFake(
  () => startFakeFireworks({ apiKey: KEY, accountId: ACCOUNT }),
  (fake) => ({ GATEWAY_FIREWORKS_BASE_URL: fake.origin }),
);

const line = (n: number, pad = '') =>
  `${JSON.stringify({
    messages: [
      { role: 'user', content: `Question ${n}` },
      { role: 'assistant', content: `Answer ${n}${pad}` },
    ],
  })}\n`;

/**
 * Exactly `size` bytes of chat JSONL, hashed on the way: one block of about CHUNK bytes of lines, built
 * once and sent again and again (building 200 MB of lines one by one costs more CPU than the upload it
 * tests), then a last line padded to fit.
 */
function* jsonl(size: number, hash: ReturnType<typeof createHash>): Generator<Buffer> {
  const lines: string[] = [];
  for (let bytes = 0, n = 1; bytes < CHUNK; n++) {
    lines.push(line(n));
    bytes += Buffer.byteLength(lines.at(-1)!);
  }
  const block = Buffer.from(lines.join(''));
  let left = size;
  const emit = (chunk: Buffer) => {
    hash.update(chunk);
    left -= chunk.length;
    return chunk;
  };
  while (left - block.length > 1024) yield emit(block);
  const last = line(0);
  yield emit(Buffer.from(line(0, 'x'.repeat(left - Buffer.byteLength(last)))));
}

/** A multipart body streamed from the generator: the file first, the purpose after it. */
function multipart(boundary: string, content: Iterable<Buffer>): Readable {
  return Readable.from(
    (function* () {
      yield Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.jsonl"\r\nContent-Type: application/jsonl\r\n\r\n`);
      yield* content;
      yield Buffer.from(`\r\n--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nfine-tune\r\n--${boundary}--\r\n`);
    })(),
  );
}

const spoolDirs = () => readdirSync(tmpdir()).filter((name) => name.startsWith('gw-fireworks-upload-'));

test('a 200 MB dataset goes through the signed URL with its exact size declared, at flat memory', async () => {
  const spooledBefore = spoolDirs();
  const hash = createHash('sha256');
  const boundary = 'large-upload-boundary';
  const { result: res, growth } = await peakGrowth(() =>
    gatewayFetch(`${on.gw.url}/v1/files`, {
      method: 'POST',
      headers: {
        'x-gateway-api-key': on.gw.key,
        'x-gateway-provider': 'fireworks-ai',
        'x-gateway-fireworks-account-id': ACCOUNT,
        authorization: `Bearer ${KEY}`,
        'content-type': `multipart/form-data; boundary=${boundary}`,
      },
      body: multipart(boundary, jsonl(SIZE, hash)) as unknown as BodyInit,
      duplex: 'half',
      // Else undici keeps the streamed body to replay it on a redirect: the test's own client would hold the file.
      redirect: 'error',
    } as RequestInit),
  );
  const file = await res.json();
  expect(res.status).toBe(200);
  expect(file).toMatchObject({ object: 'file', bytes: SIZE, filename: 'big.jsonl', purpose: 'fine-tune', status: 'processed' });

  // The size was declared exactly, the signed PUT carried exactly that many bytes, and they are the file's.
  const sha256 = hash.digest('hex');
  expect(on.fake.state.datasetFiles.get(file.id)?.get('big.jsonl')).toEqual({ declaredSize: SIZE, received: { bytes: SIZE, sha256 }, via: 'signedUrl' });
  const put = on.fake.state.requests.find((r) => r.method === 'PUT');
  expect(put?.headers).toMatchObject({ 'content-length': String(SIZE), 'x-goog-content-length-range': `${SIZE},${SIZE}` });
  expect(put?.headers.authorization).toBeUndefined();
  expect(on.fake.state.requests.some((r) => r.path.endsWith(':upload'))).toBe(false);
  expect(on.fake.state.datasets.get(file.id)).toMatchObject({ state: 'READY', format: 'CHAT' });

  expect(growth.arrayBuffers).toBeLessThan(MAX_BUFFER_GROWTH);
  expect(growth.rss).toBeLessThan(MAX_RSS_GROWTH);
  expect(spoolDirs()).toEqual(spooledBefore);
}, 600_000);
