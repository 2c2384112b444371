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
import v8 from 'node:v8';
import vm from 'node:vm';
import { startFakeFireworks, type FakeFireworks } from '../fakes/fireworks-server';
import { gatewayFetch } from '../support/answers';
import { startTestGateway, type TestGateway } from '../support/gateway';

const KEY = 'fw-large-upload-0123456789';
const ACCOUNT = 'acme-labs';
const SIZE = 200 * 1024 * 1024;
const CHUNK = 64 * 1024;
/** What the test tolerates above the memory held before the upload: a small fraction of the file. */
const MAX_RSS_GROWTH = 64 * 1024 * 1024;
const MAX_BUFFER_GROWTH = 32 * 1024 * 1024;

/** A full garbage collection, so what is measured is memory still held, not garbage not yet collected. */
v8.setFlagsFromString('--expose-gc');
const collectGarbage: () => void = vm.runInNewContext('gc');

/** Memory held now: the process's resident set, and the bytes of the Buffers alive. */
function held() {
  collectGarbage();
  const { rss, arrayBuffers } = process.memoryUsage();
  return { rss, arrayBuffers };
}

let fake: FakeFireworks;
let gw: TestGateway;

beforeAll(async () => {
  fake = await startFakeFireworks({ apiKey: KEY, accountId: ACCOUNT });
  gw = await startTestGateway({ GATEWAY_FIREWORKS_BASE_URL: fake.origin });
});

afterAll(async () => {
  await gw.stop();
  await fake.close();
});

const line = (n: number, pad = '') =>
  `${JSON.stringify({
    messages: [
      { role: 'user', content: `Question ${n}` },
      { role: 'assistant', content: `Answer ${n}${pad}` },
    ],
  })}\n`;

/** Exactly `size` bytes of chat JSONL in chunks of about CHUNK bytes, hashed on the way; the last line is padded to fit. */
function* jsonl(size: number, hash: ReturnType<typeof createHash>): Generator<Buffer> {
  let left = size;
  let n = 0;
  while (left > 0) {
    const lines: string[] = [];
    let bytes = 0;
    while (bytes < CHUNK && left - bytes > 1024) {
      lines.push(line(++n));
      bytes += Buffer.byteLength(lines.at(-1)!);
    }
    if (left - bytes <= 1024) {
      const last = line(++n);
      lines.push(line(n, 'x'.repeat(left - bytes - Buffer.byteLength(last))));
    }
    const chunk = Buffer.from(lines.join(''));
    hash.update(chunk);
    left -= chunk.length;
    yield chunk;
  }
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
  const baseline = held();
  const peak = { ...baseline };
  // Each sample is a full collection: in a jest worker whose heap earlier test files have grown, sampling
  // much more often than this leaves the upload little time to run.
  const sampler = setInterval(() => {
    const now = held();
    peak.rss = Math.max(peak.rss, now.rss);
    peak.arrayBuffers = Math.max(peak.arrayBuffers, now.arrayBuffers);
  }, 1000);
  let res: Response;
  try {
    res = await gatewayFetch(`${gw.url}/v1/files`, {
      method: 'POST',
      headers: {
        'x-gateway-api-key': gw.key,
        'x-gateway-provider': 'fireworks-ai',
        'x-gateway-fireworks-account-id': ACCOUNT,
        authorization: `Bearer ${KEY}`,
        'content-type': `multipart/form-data; boundary=${boundary}`,
      },
      body: multipart(boundary, jsonl(SIZE, hash)) as unknown as BodyInit,
      duplex: 'half',
      // Else undici keeps the streamed body to replay it on a redirect: the test's own client would hold the file.
      redirect: 'error',
    } as RequestInit);
  } finally {
    clearInterval(sampler);
  }
  const file = await res.json();
  expect(res.status).toBe(200);
  expect(file).toMatchObject({ object: 'file', bytes: SIZE, filename: 'big.jsonl', purpose: 'fine-tune', status: 'processed' });

  // The size was declared exactly, the signed PUT carried exactly that many bytes, and they are the file's.
  const sha256 = hash.digest('hex');
  expect(fake.state.datasetFiles.get(file.id)?.get('big.jsonl')).toEqual({ declaredSize: SIZE, received: { bytes: SIZE, sha256 }, via: 'signedUrl' });
  const put = fake.state.requests.find((r) => r.method === 'PUT');
  expect(put?.headers).toMatchObject({ 'content-length': String(SIZE), 'x-goog-content-length-range': `${SIZE},${SIZE}` });
  expect(put?.headers.authorization).toBeUndefined();
  expect(fake.state.requests.some((r) => r.path.endsWith(':upload'))).toBe(false);
  expect(fake.state.datasets.get(file.id)).toMatchObject({ state: 'READY', format: 'CHAT' });

  expect(peak.arrayBuffers - baseline.arrayBuffers).toBeLessThan(MAX_BUFFER_GROWTH);
  expect(peak.rss - baseline.rss).toBeLessThan(MAX_RSS_GROWTH);
  expect(spoolDirs()).toEqual(spooledBefore);
}, 300_000);
