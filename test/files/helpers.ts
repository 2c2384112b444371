import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gatewayFetch, gatewaySdk } from '../support/answers';
import type OpenAI from 'openai';
import type { TestGateway } from '../support/gateway';
import { eventually } from '../support/expect';

/** A fresh DATA_DIR for one test file (files, temporary files and the master key live there). */
export async function tempDataDir(prefix = 'gw-files-'): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** What DATA_DIR/files holds (stored objects and any temporary files), sorted. */
export async function storedNames(dataDir: string): Promise<string[]> {
  try {
    return (await readdir(join(dataDir, 'files'))).sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

/** The storage keys the database knows, sorted: with storedNames, proves nothing stray is kept. */
export async function recordedKeys(gw: TestGateway): Promise<string[]> {
  const rows = await gw.gateway.services.db.prisma.file.findMany({ select: { storageKey: true } });
  return rows.map((r) => r.storageKey).sort();
}

/** The official SDK, unchanged, pointed at the gateway. */
export function sdk(gw: { url: string; key: string }): OpenAI {
  return gatewaySdk(gw);
}

export const example = (n: number, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    messages: [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: `Question ${n} — ✓` },
      { role: 'assistant', content: `Answer ${n}` },
    ],
    ...extra,
  });

export const dataset = (examples = 10) => Array.from({ length: examples }, (_, i) => example(i + 1)).join('\n') + '\n';

export const BOUNDARY = '----gatewaytestboundary7MA4YWxkTrZu0gW';

export function filePart(content: Buffer | string, filename = 'train.jsonl', name = 'file'): Buffer {
  return Buffer.concat([
    Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"; filename="${filename}"\r\nContent-Type: application/jsonl\r\n\r\n`),
    Buffer.isBuffer(content) ? content : Buffer.from(content),
    Buffer.from('\r\n'),
  ]);
}

export function fieldPart(name: string, value: string): Buffer {
  return Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`);
}

export const closing = () => Buffer.from(`--${BOUNDARY}--\r\n`);

/**
 * A raw connection to the gateway that has sent the head of a multipart `POST /v1/files` announcing
 * `contentLength` body bytes: the test writes as much of the body as it wants, then hangs up.
 */
export async function rawUpload(gw: { url: string; key: string }, contentLength: number, boundary = BOUNDARY): Promise<Socket> {
  const socket = connect(Number(new URL(gw.url).port), '127.0.0.1');
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  socket.on('error', () => undefined);
  socket.write(
    `POST /v1/files HTTP/1.1\r\nHost: 127.0.0.1\r\nx-gateway-api-key: ${gw.key}\r\n` +
      `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${contentLength}\r\n\r\n`,
  );
  return socket;
}

/** A hand-built multipart request, so the order of the parts is ours to choose. */
export async function postMultipart(gw: { url: string; key: string }, path: string, parts: Buffer[], headers: Record<string, string> = {}) {
  const res = await gatewayFetch(gw.url + path, {
    method: 'POST',
    headers: { 'x-gateway-api-key': gw.key, 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, ...headers },
    body: Buffer.concat([...parts, closing()]),
  });
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: res.status, body };
}

/** `eventually` with the files tests' pace (10 ms, 5 s): `condition` holds before `ms`. */
export const waitFor = (condition: () => Promise<boolean>, what: string, ms = 5000): Promise<true> => eventually<true>(condition, ms, 10, what);
