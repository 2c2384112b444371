/**
 * What every fake provider server shares: a loopback HTTP server, a log of the requests it saw (so a
 * test can prove a request never reached it, or check the exact headers and bytes it received), and
 * injected failures and slowness (`failNext`, `delayNext`) for retry, error-mapping and time-out
 * tests, and doctored answers (`reshapeNext`) for a provider that changed its answer's shape. Each fake supplies only its routes and how its provider words an error.
 */
import { randomInt } from 'node:crypto';
import http from 'node:http';
import http2 from 'node:http2';
import net, { type AddressInfo } from 'node:net';
import { Duplex, type Readable } from 'node:stream';
import busboy from 'busboy';

export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
}

export interface FailOptions {
  /** How many matching requests fail (default 1). */
  times?: number;
  /** Sent as the `Retry-After` header. */
  retryAfter?: string;
  /** Replaces the fake's default error message. */
  message?: string;
}

/** An answer: JSON for objects, bytes/text as they are. */
export interface FakeReply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** Thrown by a fake's routes; the fake's `renderError` turns it into its provider's error body. */
export class FakeHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** Provider-specific details for the renderer (a code, a param, an AWS error name...). */
    readonly details: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

interface Injection extends FailOptions {
  method: string;
  pathPrefix: string;
  times: number;
  status?: number;
  delayMs?: number;
}

export interface FakeServerSpec {
  /**
   * Handles one request. Returns the reply, or nothing when it wrote the response itself (a stream).
   * Throwing a FakeHttpError answers with the provider's error shape; anything else is a 500.
   */
  route(req: http.IncomingMessage, res: http.ServerResponse, url: URL): Promise<FakeReply | void>;
  /** The provider's error body (and extra headers) for a failure. */
  renderError(error: FakeHttpError): FakeReply;
  /**
   * The error an injected failure of this status answers with (default: a generic message). `url` lets
   * a fake that speaks several error dialects (Azure's inference and authoring APIs, Fireworks' control
   * plane and inference) pick the right one.
   */
  injectedError?(status: number, options: FailOptions, url: URL): FakeHttpError;
  /** The log to record into; a fake made of several servers (one per host) passes one log to all, keeping the order. */
  requests?: RecordedRequest[];
  /**
   * Also answer cleartext HTTP/2 (prior knowledge) on the same port, next to HTTP/1.1: some official
   * clients speak only HTTP/2 by default (the AWS SDK's Bedrock runtime client). Routes then receive
   * the HTTP/2 compatibility request/response, which have no `host` header (`:authority` instead).
   */
  http2?: boolean;
}

export interface FakeServer {
  /** `http://127.0.0.1:<port>` (no trailing slash). */
  origin: string;
  port: number;
  requests: RecordedRequest[];
  /** The next `times` (default 1) requests matching method and path prefix fail with `status`. */
  failNext(method: string, pathPrefix: string, status: number, options?: FailOptions): void;
  /** The next `times` (default 1) matching requests are answered only after `ms`. */
  delayNext(method: string, pathPrefix: string, ms: number, times?: number): void;
  /** The JSON body of the next `times` (default 1) matching successful answers goes through `reshape` (a field dropped, retyped). */
  reshapeNext(method: string, pathPrefix: string, reshape: (body: unknown) => unknown, times?: number): void;
  /** Drops the failures and delays injected that no request has taken yet, and answers the requests held back now: a test's slowness ends with it. */
  clearInjections(): void;
  close(): Promise<void>;
}

interface Reshape {
  method: string;
  pathPrefix: string;
  reshape: (body: unknown) => unknown;
  times: number;
}

export async function startFakeServer(spec: FakeServerSpec): Promise<FakeServer> {
  const requests = spec.requests ?? [];
  const injections: Injection[] = [];
  const reshapes: Reshape[] = [];
  /** The requests a `delayNext` holds back: each one's timer, and how to let it go at once. */
  const held = new Map<NodeJS.Timeout, () => void>();

  function take(method: string, path: string, kind: 'fail' | 'delay'): Injection | undefined {
    const found = injections.find(
      (i) => (i.method === '*' || i.method === method) && path.startsWith(i.pathPrefix) && (kind === 'delay') === (i.delayMs !== undefined),
    );
    if (found && --found.times <= 0) injections.splice(injections.indexOf(found), 1);
    return found;
  }

  function hold(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => release(), ms);
      const release = () => {
        clearTimeout(timer);
        held.delete(timer);
        resolve();
      };
      held.set(timer, release);
    });
  }

  /** A successful JSON answer a `reshapeNext` matches, doctored. */
  function reshaped(method: string, path: string, reply: FakeReply): FakeReply {
    const found = reshapes.find((r) => r.method === method && path.startsWith(r.pathPrefix));
    const json = reply.status < 300 && typeof reply.body === 'object' && reply.body !== null && !Buffer.isBuffer(reply.body);
    if (!found || !json) return reply;
    if (--found.times <= 0) reshapes.splice(reshapes.indexOf(found), 1);
    return { ...reply, body: found.reshape(structuredClone(reply.body)) };
  }

  const errorReply = (e: FakeHttpError): FakeReply => {
    const reply = spec.renderError(e);
    return { ...reply, headers: { ...e.headers, ...reply.headers } };
  };

  async function handle(req: http.IncomingMessage, res: http.ServerResponse) {
    const url = new URL(req.url ?? '/', 'http://fake');
    const method = req.method ?? 'GET';
    requests.push({ method, path: url.pathname, query: url.searchParams, headers: req.headers });

    const delay = take(method, url.pathname, 'delay');
    if (delay) await hold(delay.delayMs ?? 0);

    const failure = take(method, url.pathname, 'fail');
    if (failure) {
      req.resume(); // drain the body so the client is not left mid-upload
      const status = failure.status!;
      const error =
        spec.injectedError?.(status, failure, url) ??
        new FakeHttpError(status, failure.message ?? (status === 429 ? 'Rate limit reached' : 'The server had an error'));
      const reply = errorReply(error);
      if (failure.retryAfter !== undefined) reply.headers = { ...reply.headers, 'retry-after': failure.retryAfter };
      return send(res, reply);
    }

    try {
      const reply = await spec.route(req, res, url);
      if (reply) send(res, reshaped(method, url.pathname, reply));
    } catch (e) {
      req.resume();
      if (res.headersSent) return void res.destroy();
      send(res, errorReply(e instanceof FakeHttpError ? e : new FakeHttpError(500, 'The server had an error')));
    }
  }

  const server = http.createServer((req, res) => void handle(req, res));
  const listener = spec.http2 ? withHttp2(server, handle) : { server, closeAll: () => server.closeAllConnections() };
  await new Promise<void>((resolve) => listener.server.listen(0, '127.0.0.1', resolve));
  const { port } = listener.server.address() as AddressInfo;

  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    requests,
    failNext(method, pathPrefix, status, options = {}) {
      injections.push({ ...options, method: method.toUpperCase(), pathPrefix, status, times: options.times ?? 1 });
    },
    delayNext(method, pathPrefix, ms, times = 1) {
      injections.push({ method: method.toUpperCase(), pathPrefix, delayMs: ms, times });
    },
    reshapeNext(method, pathPrefix, reshape, times = 1) {
      reshapes.push({ method: method.toUpperCase(), pathPrefix, reshape, times });
    },
    clearInjections() {
      injections.length = 0;
      for (const release of [...held.values()]) release();
    },
    async close() {
      for (const timer of held.keys()) clearTimeout(timer);
      listener.closeAll();
      await new Promise<void>((resolve) => listener.server.close(() => resolve()));
    },
  };
}

const HTTP2_PREFACE = 'PRI * HTTP/2.0';

/**
 * A front server that looks at the first bytes of each connection and hands it to the HTTP/1.1
 * server, or to an HTTP/2 server when they are the HTTP/2 connection preface.
 */
function withHttp2(h1: http.Server, handle: (req: http.IncomingMessage, res: http.ServerResponse) => Promise<void>) {
  // The compatibility API mirrors IncomingMessage/ServerResponse closely enough for the fakes' routes.
  const h2 = http2.createServer((req, res) => void handle(req as unknown as http.IncomingMessage, res as unknown as http.ServerResponse));
  const sockets = new Set<net.Socket>();
  const front = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    // A client resetting the connection must not crash the test run; the servers see the close.
    socket.on('error', () => socket.destroy());
    socket.once('data', (head: Buffer) => {
      socket.pause();
      socket.unshift(head);
      // The HTTP/1.1 parser reads what was put back; the HTTP/2 session reads only a socket it can
      // consume from the start, so it gets a stream that replays the socket instead.
      if (head.subarray(0, HTTP2_PREFACE.length).toString('latin1') === HTTP2_PREFACE) h2.emit('connection', replaying(socket));
      else h1.emit('connection', socket);
      socket.resume();
    });
  });
  return {
    server: front,
    closeAll: () => {
      for (const socket of sockets) socket.destroy();
    },
  };
}

/** A duplex stream over `socket`, for a consumer that cannot take a socket whose first bytes were already read. */
function replaying(socket: net.Socket): Duplex {
  const duplex = new Duplex({
    read: () => void socket.resume(),
    write: (chunk, encoding, callback) => void socket.write(chunk, encoding, callback),
    final: (callback) => void socket.end(callback),
    destroy: (error, callback) => {
      socket.destroy(error ?? undefined);
      callback(error);
    },
  });
  socket.on('data', (chunk) => {
    if (!duplex.push(chunk)) socket.pause();
  });
  socket.on('end', () => duplex.push(null));
  socket.on('close', () => duplex.destroy());
  return duplex;
}

/** Writes a reply: objects as JSON, strings and buffers as they are. */
export function send(res: http.ServerResponse, reply: FakeReply): void {
  if (res.destroyed) return;
  const { status, body, headers = {} } = reply;
  if (body === undefined) {
    res.writeHead(status, headers);
    res.end();
  } else if (typeof body === 'string' || Buffer.isBuffer(body)) {
    res.writeHead(status, { 'content-type': 'application/octet-stream', ...headers });
    res.end(body);
  } else {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  }
}

export interface ChunkedWriteOptions {
  /** Pause between chunks, so a test can observe streaming and disconnect midway. */
  delayMs?: number;
  /** Called when the client goes away before the last chunk was written. */
  onAbandoned?: () => void;
}

/**
 * Writes a streamed answer one chunk per write, pausing between chunks, and reports a client that
 * left before the end. Works on HTTP/1.1 and HTTP/2 responses (`res.destroyed` exists only on the former).
 */
export async function writeChunks(
  res: http.ServerResponse,
  head: { status: number; headers: Record<string, string> },
  chunks: Array<string | Uint8Array>,
  options: ChunkedWriteOptions = {},
): Promise<void> {
  let finished = false;
  let gone = false;
  res.on('close', () => {
    gone = true;
    if (!finished) options.onAbandoned?.();
  });
  res.writeHead(head.status, head.headers);
  for (const chunk of chunks) {
    if (gone) return;
    res.write(chunk);
    if (options.delayMs) await new Promise((resolve) => setTimeout(resolve, options.delayMs));
  }
  finished = true;
  res.end();
}

/** The whole request body, or any stream's (fakes keep what they receive so tests can compare bytes). */
export async function readBody(req: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** A JSON object body, or the given error when the body is not one. */
export async function readJsonObject(req: http.IncomingMessage, invalid: () => FakeHttpError): Promise<Record<string, unknown>> {
  const text = (await readBody(req)).toString('utf8');
  try {
    const body: unknown = JSON.parse(text);
    if (body && typeof body === 'object' && !Array.isArray(body)) return body as Record<string, unknown>;
  } catch {
    // fall through
  }
  throw invalid();
}

export const unixNow = () => Math.floor(Date.now() / 1000);

/** RFC 3339 time, as the providers whose objects carry ISO timestamps send it. */
export const isoNow = () => new Date().toISOString();

/** A random decimal id of `length` digits without a leading zero (Google project numbers and resource ids, AWS account ids). */
export function randomDigits(length: number): string {
  let digits = String(randomInt(1, 10));
  while (digits.length < length) digits += String(randomInt(0, 10));
  return digits;
}

const xmlEscape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * An object store's XML error (S3 and Cloud Storage's XML API share `<Error><Code/><Message/>…`), for
 * fakes that hand out presigned or signed upload URLs. `extra` adds elements such as `<Details>`.
 */
export function storageXmlError(status: number, code: string, message: string, extra: Record<string, string> = {}): FakeReply {
  const elements = Object.entries({ Code: code, Message: message, ...extra }).map(([name, value]) => `<${name}>${xmlEscape(value)}</${name}>`);
  return { status, body: `<?xml version="1.0" encoding="UTF-8"?>\n<Error>${elements.join('')}</Error>`, headers: { 'content-type': 'application/xml' } };
}

/** The token of an `Authorization: Bearer …` header, if there is one. */
export function bearerToken(req: http.IncomingMessage): string | undefined {
  return /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
}

export interface UploadedPart {
  filename: string;
  content: Buffer;
}

export interface MultipartBody {
  fields: Record<string, string>;
  files: Record<string, UploadedPart>;
}

/**
 * A `multipart/form-data` body: its text fields and its file parts (kept whole, so tests can compare
 * bytes). `invalid` words the provider's error for a body that is not multipart or is malformed.
 */
export function readMultipart(req: http.IncomingMessage, invalid: (message: string) => FakeHttpError): Promise<MultipartBody> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: req.headers, defParamCharset: 'utf8' });
    } catch {
      req.resume();
      return reject(invalid('Expected multipart/form-data'));
    }
    const body: MultipartBody = { fields: {}, files: {} };
    const pending: Promise<void>[] = [];
    parser.on('field', (name, value) => (body.fields[name] = value));
    parser.on('file', (name, stream, info) => {
      pending.push(readBody(stream).then((content) => void (body.files[name] = { filename: info.filename, content })));
    });
    parser.on('error', () => reject(invalid('Malformed multipart body')));
    parser.on('close', () => void Promise.all(pending).then(() => resolve(body), reject));
    req.pipe(parser);
  });
}

/**
 * OpenAI's cursor paging (OpenAI and Azure OpenAI lists): the `limit` items that follow the item whose
 * id is `after`, in the order given. An unknown `after` yields an empty page, as a stale cursor does.
 */
export function cursorPage<T extends { id: string }>(items: T[], query: URLSearchParams, defaultLimit: number, invalidLimit: () => FakeHttpError) {
  const limit = query.has('limit') ? Number(query.get('limit')) : defaultLimit;
  if (!Number.isInteger(limit) || limit < 1) throw invalidLimit();
  const after = query.get('after');
  const start = after ? items.findIndex((item) => item.id === after) + 1 : 0;
  const data = after && start === 0 ? [] : items.slice(start, start + limit);
  return { object: 'list' as const, data, has_more: data.length > 0 && start + data.length < items.length };
}

/**
 * `GET {prefix}/batches/{id}` (retrieve) and `POST {prefix}/batches/{id}/cancel` of OpenAI's batch
 * wire, which Azure OpenAI and Together follow too: the reply, or undefined for any other request.
 * `batches` is asked for the service only when the path names a batch.
 */
export function batchByIdReply(
  method: string | undefined,
  path: string,
  prefix: string,
  batches: () => { get(id: string): unknown; cancel(id: string): unknown },
): FakeReply | undefined {
  const m = new RegExp(`^${prefix}/batches/([^/]+)(/cancel)?$`).exec(path);
  if (!m) return undefined;
  const id = decodeURIComponent(m[1]);
  if (method === 'GET' && !m[2]) return { status: 200, body: batches().get(id) };
  if (method === 'POST' && m[2]) return { status: 200, body: batches().cancel(id) };
  return undefined;
}
