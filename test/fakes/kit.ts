/**
 * What every fake provider server shares: a loopback HTTP server, a log of the requests it saw (so a
 * test can prove a request never reached it, or check the exact headers and bytes it received), and
 * injected failures and slowness (`failNext`, `delayNext`) for retry, error-mapping and time-out
 * tests. Each fake supplies only its routes and how its provider words an error.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Readable } from 'node:stream';
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
   * The error an injected failure of this status answers with (default: a generic message). `path` lets
   * a fake that speaks several error dialects (a control plane and an inference API) pick the right one.
   */
  injectedError?(status: number, options: FailOptions, path: string): FakeHttpError;
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
  close(): Promise<void>;
}

export async function startFakeServer(spec: FakeServerSpec): Promise<FakeServer> {
  const requests: RecordedRequest[] = [];
  const injections: Injection[] = [];
  const timers = new Set<NodeJS.Timeout>();

  function take(method: string, path: string, kind: 'fail' | 'delay'): Injection | undefined {
    const found = injections.find((i) => (i.method === '*' || i.method === method) && path.startsWith(i.pathPrefix) && (kind === 'delay') === (i.delayMs !== undefined));
    if (found && --found.times <= 0) injections.splice(injections.indexOf(found), 1);
    return found;
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
    if (delay) await new Promise<void>((resolve) => timers.add(setTimeout(resolve, delay.delayMs)));

    const failure = take(method, url.pathname, 'fail');
    if (failure) {
      req.resume(); // drain the body so the client is not left mid-upload
      const status = failure.status!;
      const error =
        spec.injectedError?.(status, failure, url.pathname) ??
        new FakeHttpError(status, failure.message ?? (status === 429 ? 'Rate limit reached' : 'The server had an error'));
      const reply = errorReply(error);
      if (failure.retryAfter !== undefined) reply.headers = { ...reply.headers, 'retry-after': failure.retryAfter };
      return send(res, reply);
    }

    try {
      const reply = await spec.route(req, res, url);
      if (reply) send(res, reply);
    } catch (e) {
      req.resume();
      if (res.headersSent) return void res.destroy();
      send(res, errorReply(e instanceof FakeHttpError ? e : new FakeHttpError(500, 'The server had an error')));
    }
  }

  const server = http.createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

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
    async close() {
      for (const t of timers) clearTimeout(t);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
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
