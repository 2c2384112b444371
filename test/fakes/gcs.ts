/**
 * A fake Cloud Storage JSON API (`storage.googleapis.com`): simple (`media`), `multipart` and `resumable`
 * uploads, object metadata and download, listing and deletion, in memory. It answers as GCS does: object
 * resources with `size` and `generation` as strings, base64 `md5Hash` / `crc32c`, `x-goog-hash` on
 * downloads, 308 + `Range` for an unfinished resumable upload, and `{error: {code, message, errors}}`.
 * It checks what GCS checks: the bucket exists, the object name is URL-encoded, non-final resumable
 * chunks are multiples of 256 KiB, Content-Range matches the body, checksums a client sends match.
 */
import { createHash, randomBytes } from 'node:crypto';
import type http from 'node:http';
import type { BearerProblem } from './google-auth';
import { FakeHttpError, readBody, type FailOptions, type FakeReply } from './kit';

/** A stored object; `data` holds exactly the bytes received. */
export interface GcsObject {
  bucket: string;
  name: string;
  data: Buffer;
  contentType: string;
  metadata?: Record<string, string>;
  generation: string;
  timeCreated: string;
  md5Hash: string;
  crc32c: string;
}

export interface ResumableSession {
  id: string;
  bucket: string;
  name: string;
  contentType: string;
  metadata?: Record<string, string>;
  /** From `X-Upload-Content-Length`, when the client announced it. */
  announcedSize?: number;
  received: Buffer[];
  receivedBytes: number;
  /** Set once the upload completed. */
  object?: GcsObject;
}

export interface GcsState {
  /** bucket → object name → object. */
  buckets: Map<string, Map<string, GcsObject>>;
  uploadSessions: Map<string, ResumableSession>;
}

/** Resumable uploads move in multiples of this, except for the last chunk. */
const RESUMABLE_CHUNK_QUANTUM = 256 * 1024;
const DEFAULT_MAX_RESULTS = 1000;

/** GCS JSON API error: `{error: {code, message, errors: [{message, domain, reason}]}}`. */
export class GcsError extends FakeHttpError {
  constructor(status: number, message: string, reason: string) {
    super(status, message, { reason });
  }
}

const REASON_BY_STATUS: Record<number, string> = {
  400: 'invalid',
  401: 'authError',
  403: 'forbidden',
  404: 'notFound',
  412: 'conditionNotMet',
  429: 'rateLimitExceeded',
};

export function renderGcsError(e: FakeHttpError): FakeReply {
  const reason = (e.details.reason as string | undefined) ?? REASON_BY_STATUS[e.status] ?? 'backendError';
  return { status: e.status, body: { error: { code: e.status, message: e.message, errors: [{ message: e.message, domain: 'global', reason }] } } };
}

export function gcsInjectedError(status: number, options: FailOptions): GcsError {
  if (status === 429) {
    return new GcsError(429, options.message ?? 'The rate of requests exceeds the rate limit. Please reduce the rate of requests.', 'rateLimitExceeded');
  }
  return new GcsError(status, options.message ?? (status >= 500 ? 'Backend Error' : 'Error'), REASON_BY_STATUS[status] ?? 'backendError');
}

const CRC32C_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** CRC32C (Castagnoli) as GCS reports it: the big-endian checksum, base64. */
export function crc32cBase64(data: Buffer): string {
  let crc = 0xffffffff;
  for (const byte of data) crc = CRC32C_TABLE[(crc ^ byte) & 0xff] ^ (crc >>> 8);
  const out = Buffer.alloc(4);
  out.writeUInt32BE((crc ^ 0xffffffff) >>> 0);
  return out.toString('base64');
}

const md5Base64 = (data: Buffer) => createHash('md5').update(data).digest('base64');

export function createGcsState(bucketNames: string[]): GcsState {
  return { buckets: new Map(bucketNames.map((name) => [name, new Map()])), uploadSessions: new Map() };
}

/** Stores an object (as an upload would), replacing any object of that name. */
export function putObject(
  state: GcsState,
  bucket: string,
  name: string,
  data: Buffer,
  contentType = 'application/octet-stream',
  metadata?: Record<string, string>,
): GcsObject {
  const object: GcsObject = {
    bucket,
    name,
    data,
    contentType,
    metadata,
    // GCS generations are microsecond timestamps; a random tail keeps two writes in one millisecond apart.
    generation: `${Date.now()}${String(randomBytes(2).readUInt16BE() % 1000).padStart(3, '0')}`,
    timeCreated: new Date().toISOString(),
    md5Hash: md5Base64(data),
    crc32c: crc32cBase64(data),
  };
  bucketOf(state, bucket).set(name, object);
  return object;
}

function bucketOf(state: GcsState, bucket: string): Map<string, GcsObject> {
  const objects = state.buckets.get(bucket);
  if (!objects) throw new GcsError(404, 'The specified bucket does not exist.', 'notFound');
  return objects;
}

function objectOf(state: GcsState, bucket: string, name: string): GcsObject {
  const object = bucketOf(state, bucket).get(name);
  if (!object) throw new GcsError(404, `No such object: ${bucket}/${name}`, 'notFound');
  return object;
}

/** The object resource, links pointing at the host the client used. */
function objectResource(object: GcsObject, origin: string) {
  const encoded = encodeURIComponent(object.name);
  return {
    kind: 'storage#object',
    id: `${object.bucket}/${object.name}/${object.generation}`,
    selfLink: `${origin}/storage/v1/b/${object.bucket}/o/${encoded}`,
    mediaLink: `${origin}/download/storage/v1/b/${object.bucket}/o/${encoded}?generation=${object.generation}&alt=media`,
    name: object.name,
    bucket: object.bucket,
    generation: object.generation,
    metageneration: '1',
    contentType: object.contentType,
    storageClass: 'STANDARD',
    size: String(object.data.length),
    md5Hash: object.md5Hash,
    crc32c: object.crc32c,
    etag: Buffer.from(object.generation).toString('base64'),
    timeCreated: object.timeCreated,
    updated: object.timeCreated,
    timeStorageClassUpdated: object.timeCreated,
    ...(object.metadata ? { metadata: object.metadata } : {}),
  };
}

/** The IAM permission a request needs, for the wording of GCS's "anonymous caller" error. */
function permissionFor(method: string, path: string): string {
  if (method === 'POST' || method === 'PUT') return 'storage.objects.create';
  if (method === 'DELETE') return 'storage.objects.delete';
  return /\/o$/.test(path) ? 'storage.objects.list' : 'storage.objects.get';
}

/** GCS's 401 for a request without a usable bearer token (worded unlike the other Google APIs). */
export function gcsUnauthenticated(problem: BearerProblem, method: string, path: string): GcsError {
  const permission = permissionFor(method, path);
  const error =
    problem === 'missing'
      ? new GcsError(
          401,
          `Anonymous caller does not have ${permission} access to the Google Cloud Storage object. Permission '${permission}' denied on resource (or it may not exist).`,
          'required',
        )
      : new GcsError(401, 'Invalid Credentials', 'authError');
  error.headers['www-authenticate'] = 'Bearer realm="https://accounts.google.com/"';
  return error;
}

/** Checks the `X-Goog-Hash: crc32c=…,md5=…` a client sent against the bytes received, as GCS does. */
function checkClientHashes(header: string | string[] | undefined, data: Buffer, declared: { crc32c?: unknown; md5Hash?: unknown } = {}): void {
  const sent: Record<string, unknown> = { crc32c: declared.crc32c, md5: declared.md5Hash };
  for (const pair of String(header ?? '').split(',')) {
    const at = pair.indexOf('=');
    if (at > 0) sent[pair.slice(0, at).trim()] = pair.slice(at + 1).trim();
  }
  const checks: [string, string, string][] = [
    ['crc32c', 'CRC32C', crc32cBase64(data)],
    ['md5', 'MD5', md5Base64(data)],
  ];
  for (const [key, label, actual] of checks) {
    if (sent[key] !== undefined && sent[key] !== actual) {
      throw new GcsError(400, `Provided ${label} "${JSON.stringify(sent[key])}" doesn't match calculated ${label} "${actual}".`, 'invalid');
    }
  }
}

/** The parts of a `multipart/related` body: each part's headers and bytes. */
function parseMultipartRelated(contentType: string | undefined, body: Buffer): { headers: Record<string, string>; body: Buffer }[] {
  const boundary = /boundary="?([^";]+)"?/i.exec(contentType ?? '')?.[1];
  if (!contentType?.toLowerCase().startsWith('multipart/related') || !boundary) {
    throw new GcsError(400, 'Invalid multipart request: the Content-Type must be multipart/related with a boundary.', 'invalid');
  }
  const delimiter = Buffer.from(`--${boundary}`);
  const parts = [];
  let start = body.indexOf(delimiter);
  while (start !== -1) {
    const contentStart = start + delimiter.length;
    if (body.subarray(contentStart, contentStart + 2).toString() === '--') break;
    const next = body.indexOf(delimiter, contentStart);
    if (next === -1) break;
    const raw = body.subarray(contentStart, next);
    const headerEnd = raw.indexOf('\r\n\r\n');
    if (headerEnd === -1) throw new GcsError(400, 'Invalid multipart request: a part has no header block.', 'invalid');
    const headers: Record<string, string> = {};
    for (const line of raw.subarray(0, headerEnd).toString('utf8').split('\r\n')) {
      const colon = line.indexOf(':');
      if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    // A part's bytes end before the CRLF that precedes the next delimiter.
    const end = raw.length >= 2 && raw.subarray(raw.length - 2).toString() === '\r\n' ? raw.length - 2 : raw.length;
    parts.push({ headers, body: raw.subarray(headerEnd + 4, end) });
    start = next;
  }
  if (parts.length !== 2) throw new GcsError(400, `Invalid multipart request with ${parts.length} parts; expected metadata and media.`, 'invalid');
  return parts;
}

function parseMetadataJson(bytes: Buffer): Record<string, unknown> {
  if (bytes.length === 0) return {};
  try {
    const value: unknown = JSON.parse(bytes.toString('utf8'));
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // reported below
  }
  throw new GcsError(400, 'Invalid JSON payload received in the object metadata.', 'parseError');
}

/** The user metadata (`metadata: {key: value}`) of an object resource a client sent. */
const customMetadata = (resource: Record<string, unknown>) =>
  resource.metadata && typeof resource.metadata === 'object' ? (resource.metadata as Record<string, string>) : undefined;

/** A PUT's `Content-Range`: the chunk's first and last byte (`*`: to the end of the object), the object's size if known. */
interface ContentRange {
  /** Absent in a status query (`bytes *\/total`). */
  chunk?: { first: number; last: number | '*' };
  total?: number;
}

function parseContentRange(header: string | undefined): ContentRange {
  const match = /^bytes (?:\*|(\d+)-(\d+|\*))\/(\d+|\*)$/.exec(header ?? '');
  if (!match) throw new GcsError(400, `Failed to parse Content-Range header: ${header ?? '(missing)'}`, 'invalid');
  const [, first, last, total] = match;
  return {
    chunk: first === undefined ? undefined : { first: Number(first), last: last === '*' ? '*' : Number(last) },
    total: total === '*' ? undefined : Number(total),
  };
}

/** The routes of the GCS JSON API over `state`. Authentication is checked by the caller. */
export function createGcsRoutes(state: GcsState) {
  function checkPrecondition(query: URLSearchParams, bucket: string, name: string) {
    const expected = query.get('ifGenerationMatch');
    if (expected === null) return;
    const current = state.buckets.get(bucket)?.get(name)?.generation ?? '0';
    if (current !== expected) throw new GcsError(412, 'At least one of the pre-conditions you specified did not hold.', 'conditionNotMet');
  }

  function store(query: URLSearchParams, bucket: string, name: string | undefined, data: Buffer, contentType: string, metadata?: Record<string, string>) {
    if (!name) throw new GcsError(400, 'Required', 'required');
    checkPrecondition(query, bucket, name);
    return putObject(state, bucket, name, data, contentType, metadata);
  }

  async function upload(req: http.IncomingMessage, bucket: string, query: URLSearchParams, origin: string): Promise<FakeReply> {
    bucketOf(state, bucket);
    const body = await readBody(req);
    const uploadType = query.get('uploadType');
    if (uploadType === 'media') {
      checkClientHashes(req.headers['x-goog-hash'], body);
      const object = store(query, bucket, query.get('name') ?? undefined, body, req.headers['content-type'] ?? 'application/octet-stream');
      return { status: 200, body: objectResource(object, origin) };
    }
    if (uploadType === 'multipart') {
      const [metaPart, mediaPart] = parseMultipartRelated(req.headers['content-type'], body);
      const metadata = parseMetadataJson(metaPart.body);
      checkClientHashes(req.headers['x-goog-hash'], mediaPart.body, metadata);
      const name = query.get('name') ?? (metadata.name as string | undefined);
      const contentType = (metadata.contentType as string | undefined) ?? mediaPart.headers['content-type'] ?? 'application/octet-stream';
      const object = store(query, bucket, name, mediaPart.body, contentType, customMetadata(metadata));
      return { status: 200, body: objectResource(object, origin) };
    }
    if (uploadType === 'resumable') return startResumable(req, bucket, query, parseMetadataJson(body), origin);
    throw new GcsError(400, 'Upload requests must include an uploadType URL parameter and a URL-encoded object name.', 'invalid');
  }

  function startResumable(req: http.IncomingMessage, bucket: string, query: URLSearchParams, metadata: Record<string, unknown>, origin: string): FakeReply {
    const name = query.get('name') ?? (metadata.name as string | undefined);
    if (!name) throw new GcsError(400, 'Required', 'required');
    checkPrecondition(query, bucket, name);
    const announced = req.headers['x-upload-content-length'];
    const session: ResumableSession = {
      id: randomBytes(24).toString('base64url'),
      bucket,
      name,
      contentType:
        headerText(req.headers['x-upload-content-type']) ?? (typeof metadata.contentType === 'string' ? metadata.contentType : 'application/octet-stream'),
      metadata: customMetadata(metadata),
      announcedSize: announced === undefined ? undefined : Number(announced),
      received: [],
      receivedBytes: 0,
    };
    state.uploadSessions.set(session.id, session);
    const location = `${origin}/upload/storage/v1/b/${bucket}/o?uploadType=resumable&name=${encodeURIComponent(name)}&upload_id=${session.id}`;
    return { status: 200, headers: { location, 'x-guploader-uploadid': session.id } };
  }

  /** One `PUT` to a session URI: a chunk of bytes, or (`bytes *\/…`) a question about how far the upload got. */
  async function resumeUpload(req: http.IncomingMessage, query: URLSearchParams, origin: string): Promise<FakeReply> {
    const session = state.uploadSessions.get(query.get('upload_id') ?? '');
    if (!session) throw new GcsError(404, 'No such upload session.', 'notFound');
    const body = await readBody(req);
    if (session.object) return { status: 200, body: objectResource(session.object, origin) };
    const { chunk, total: declared } = parseContentRange(req.headers['content-range']);
    if (chunk) appendChunk(session, chunk, declared, body);
    const total = declared ?? session.announcedSize;
    const complete = chunk?.last === '*' || (total !== undefined && session.receivedBytes === total);
    if (!complete) {
      return { status: 308, headers: session.receivedBytes > 0 ? { range: `bytes=0-${session.receivedBytes - 1}` } : {} };
    }
    if (total !== undefined && session.receivedBytes !== total) {
      throw new GcsError(400, `Invalid request. The upload holds ${session.receivedBytes} byte(s) but its declared size is ${total} byte(s).`, 'invalid');
    }
    const data = Buffer.concat(session.received);
    checkClientHashes(req.headers['x-goog-hash'], data);
    session.object = putObject(state, session.bucket, session.name, data, session.contentType, session.metadata);
    return { status: 200, body: objectResource(session.object, origin) };
  }

  function appendChunk(session: ResumableSession, range: NonNullable<ContentRange['chunk']>, total: number | undefined, body: Buffer) {
    const last = range.last === '*' ? range.first + body.length - 1 : range.last;
    const expected = last - range.first + 1;
    if (body.length !== expected) {
      throw new GcsError(
        400,
        `Invalid request. There were ${body.length} byte(s) in the request body. There should have been ${expected} byte(s) (starting at offset ${range.first} and ending at offset ${last}) according to the Content-Range header.`,
        'invalid',
      );
    }
    if (range.first > session.receivedBytes) {
      throw new GcsError(
        400,
        `Invalid request. According to the Content-Range header, the upload offset is ${range.first} byte(s), which exceeds already uploaded size of ${session.receivedBytes} byte(s).`,
        'invalid',
      );
    }
    const isFinal = range.last === '*' || (total !== undefined && last + 1 === total);
    if (!isFinal && expected % RESUMABLE_CHUNK_QUANTUM !== 0) {
      throw new GcsError(
        400,
        `Invalid request. The number of bytes uploaded is required to be equal or greater than ${RESUMABLE_CHUNK_QUANTUM}, except for the final request (it's recommended to be the exact multiple of ${RESUMABLE_CHUNK_QUANTUM}). The received request contained ${expected} bytes, which does not meet this requirement.`,
        'invalid',
      );
    }
    if (total !== undefined && last + 1 > total) {
      throw new GcsError(400, `Invalid request. The Content-Range end ${last} is beyond the object size ${total}.`, 'invalid');
    }
    // Bytes the server already has (a client re-sending after a lost answer) are skipped, as GCS does.
    const fresh = body.subarray(session.receivedBytes - range.first);
    session.received.push(fresh);
    session.receivedBytes += fresh.length;
  }

  /** One page of a listing; with a `delimiter`, names that go deeper than it are rolled up into `prefixes`, as GCS does. */
  function list(bucket: string, query: URLSearchParams, origin: string): FakeReply {
    const objects = bucketOf(state, bucket);
    const prefix = query.get('prefix') ?? '';
    const delimiter = query.get('delimiter');
    const maxResults = query.has('maxResults') ? Number(query.get('maxResults')) : DEFAULT_MAX_RESULTS;
    if (!Number.isInteger(maxResults) || maxResults < 1) throw new GcsError(400, `Invalid value for maxResults: ${query.get('maxResults')}`, 'invalid');
    const after = query.has('pageToken') ? Buffer.from(query.get('pageToken')!, 'base64url').toString('utf8') : '';
    const entries = new Map<string, 'object' | 'prefix'>();
    for (const name of objects.keys()) {
      if (!name.startsWith(prefix)) continue;
      const cut = delimiter ? name.indexOf(delimiter, prefix.length) : -1;
      if (cut === -1) entries.set(name, 'object');
      else entries.set(name.slice(0, cut + delimiter!.length), 'prefix');
    }
    const sorted = [...entries.keys()].filter((entry) => entry > after).sort();
    const page = sorted.slice(0, maxResults);
    const items = page.filter((entry) => entries.get(entry) === 'object');
    const prefixes = page.filter((entry) => entries.get(entry) === 'prefix');
    return {
      status: 200,
      body: {
        kind: 'storage#objects',
        // GCS leaves out `items` and `prefixes` when they are empty.
        ...(prefixes.length ? { prefixes } : {}),
        ...(items.length ? { items: items.map((name) => objectResource(objects.get(name)!, origin)) } : {}),
        ...(sorted.length > page.length ? { nextPageToken: Buffer.from(page.at(-1)!).toString('base64url') } : {}),
      },
    };
  }

  function download(object: GcsObject): FakeReply {
    return {
      status: 200,
      body: object.data,
      headers: {
        'content-type': object.contentType,
        'x-goog-hash': `crc32c=${object.crc32c},md5=${object.md5Hash}`,
        'x-goog-generation': object.generation,
        'x-goog-metageneration': '1',
        'x-goog-stored-content-encoding': 'identity',
        'x-goog-stored-content-length': String(object.data.length),
      },
    };
  }

  return async function route(req: http.IncomingMessage, url: URL): Promise<FakeReply> {
    const method = req.method ?? 'GET';
    const origin = `http://${req.headers.host}`;
    const query = url.searchParams;
    // Object names are one URL-encoded path segment (`/` as %2F); an unencoded name does not match, as on GCS.
    let m = /^\/upload\/storage\/v1\/b\/([^/]+)\/o$/.exec(url.pathname);
    if (m && method === 'POST') return upload(req, decodeURIComponent(m[1]), query, origin);
    if (m && method === 'PUT') return resumeUpload(req, query, origin);
    m = /^\/(download\/)?storage\/v1\/b\/([^/]+)\/o\/([^/]+)$/.exec(url.pathname);
    if (m) {
      const object = objectOf(state, decodeURIComponent(m[2]), decodeURIComponent(m[3]));
      if (method === 'GET') return query.get('alt') === 'media' ? download(object) : { status: 200, body: objectResource(object, origin) };
      if (method === 'DELETE' && !m[1]) {
        state.buckets.get(object.bucket)!.delete(object.name);
        return { status: 204 };
      }
    }
    m = /^\/storage\/v1\/b\/([^/]+)\/o$/.exec(url.pathname);
    if (m && method === 'GET') return list(decodeURIComponent(m[1]), query, origin);
    throw new GcsError(404, 'Not Found', 'notFound');
  };
}

/** A request header's single value. */
const headerText = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);
