/**
 * A fake Amazon S3 for tests, path-style (`http://127.0.0.1:<port>/{bucket}/{key}`), in memory:
 * PutObject, GetObject (ranged), HeadObject, DeleteObject, ListObjectsV2 and multipart uploads, with
 * S3's XML bodies and errors. Every request must carry a SigV4 signature for service `s3` that
 * checks out (see sigv4.ts).
 *
 * It accepts what the AWS SDK v3 sends and checks it as S3 does: `x-amz-content-sha256` against the
 * body, flexible checksums (`x-amz-checksum-*` in a header or an `aws-chunked` trailer; CRC32,
 * SHA-1 and SHA-256 are recomputed, CRC32C and CRC64NVME are taken as they are), `Content-MD5`, and
 * `aws-chunked` bodies (`STREAMING-UNSIGNED-PAYLOAD-TRAILER`, and `STREAMING-AWS4-HMAC-SHA256-PAYLOAD`
 * whose chained chunk signatures are verified), decoded so the stored bytes are exactly the object's.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type http from 'node:http';
import { crc32 } from 'node:zlib';
import { FakeHttpError, readBody, startFakeServer, type FakeReply, type RecordedRequest } from './kit';
import {
  chunkSignature,
  headerValue,
  newSigV4Log,
  sha256Hex,
  TEST_AWS_CREDENTIALS,
  verifySigV4,
  type AwsCredentials,
  type SigV4Failure,
  type VerifiedSignature,
} from './sigv4';

/** S3's minimum size of every part of a multipart upload but the last. */
export const MIN_PART_SIZE = 5 * 1024 * 1024;
const MAX_PART_NUMBER = 10_000;
const MAX_KEYS = 1000;

export interface S3Object {
  bytes: Buffer;
  contentType: string;
  /** Quoted, as S3 sends it: the MD5 of the bytes, or for a multipart object the MD5 of the parts' MD5s plus `-<parts>`. */
  etag: string;
  lastModified: Date;
  /** `x-amz-meta-*` headers, without the prefix. */
  metadata: Record<string, string>;
  /** The whole-object checksum the client sent with a single PUT, returned by GetObject in checksum mode. */
  checksum?: { algorithm: string; value: string };
}

export interface MultipartUpload {
  uploadId: string;
  bucket: string;
  key: string;
  initiated: Date;
  contentType: string;
  metadata: Record<string, string>;
  parts: Map<number, { bytes: Buffer; etag: string }>;
}

export interface CompletedUpload {
  bucket: string;
  key: string;
  uploadId: string;
  /** Sizes of the parts the object was assembled from, in order. */
  partSizes: number[];
}

export interface FakeS3Options {
  region?: string;
  /** The credentials requests may be signed with (default: the shared test credentials). */
  credentials?: AwsCredentials[];
  /** Buckets that exist from the start. */
  buckets?: string[];
}

/** S3's `<Error><Code>…` error; `fields` become extra elements (`<Key>`, `<BucketName>`…). */
class S3Error extends FakeHttpError {
  constructor(status: number, code: string, message: string, fields: Record<string, string | number> = {}) {
    super(status, message, { code, fields });
  }
}

const xmlEscape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const XML_ENTITIES: Record<string, string> = { quot: '"', apos: "'", lt: '<', gt: '>', amp: '&' };
const xmlUnescape = (text: string) =>
  text.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (ref, name: string) =>
    name.startsWith('#')
      ? String.fromCodePoint(name[1].toLowerCase() === 'x' ? parseInt(name.slice(2), 16) : Number(name.slice(1)))
      : (XML_ENTITIES[name] ?? ref),
  );
const el = (name: string, value: string | number | boolean) => `<${name}>${xmlEscape(String(value))}</${name}>`;
const wrap = (name: string, inner: string) => `<${name}>${inner}</${name}>`;
const fields = (values: Record<string, string | number | boolean | undefined>) =>
  Object.entries(values)
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => el(name, value!))
    .join('');
const S3_NS = 'http://s3.amazonaws.com/doc/2006-03-01/';
const xmlDocument = (root: string, inner: string, namespaced = true) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<${root}${namespaced ? ` xmlns="${S3_NS}"` : ''}>${inner}</${root}>`;

/** S3's per-response ids, on answers and errors alike. */
const requestIds = () => ({ 'x-amz-request-id': randomBytes(8).toString('hex').toUpperCase(), 'x-amz-id-2': randomBytes(48).toString('base64') });

function renderError(e: FakeHttpError): FakeReply {
  const ids = requestIds();
  const code = typeof e.details.code === 'string' ? e.details.code : 'InternalError';
  const extra = (e.details.fields ?? {}) as Record<string, string | number>;
  const body = xmlDocument('Error', fields({ Code: code, Message: e.message, ...extra, RequestId: ids['x-amz-request-id'], HostId: ids['x-amz-id-2'] }), false);
  return { status: e.status, body, headers: { 'content-type': 'application/xml', ...ids } };
}

/** S3's error (and default message) for an injected failure of each status; S3 throttles with 503 SlowDown. */
const INJECTED: Record<number, [string, string]> = {
  400: ['InvalidRequest', 'Invalid Request'],
  403: ['AccessDenied', 'Access Denied'],
  404: ['NoSuchKey', 'The specified key does not exist.'],
  429: ['SlowDown', 'Please reduce your request rate.'],
  500: ['InternalError', 'We encountered an internal error. Please try again.'],
  503: ['SlowDown', 'Please reduce your request rate.'],
};

function injectedError(status: number, options: { message?: string }): S3Error {
  const [code, message] = INJECTED[status] ?? INJECTED[500];
  return new S3Error(status, code, options.message ?? message);
}

const MALFORMED = 'The authorization header is malformed;';
const UNKNOWN_KEY = 'The AWS Access Key Id you provided does not exist in our records.';
const SIGNATURE_MISMATCH = 'The request signature we calculated does not match the signature you provided. Check your key and signing method.';

/** The S3 error for a failed signature check. */
function signatureError(failure: SigV4Failure): S3Error {
  switch (failure.code) {
    case 'MissingAuthentication':
      return new S3Error(403, 'AccessDenied', 'Access Denied');
    case 'MalformedAuthorization':
      return new S3Error(400, 'AuthorizationHeaderMalformed', `${MALFORMED} ${failure.message}`);
    case 'WrongScope':
      if (failure.field !== 'region') return new S3Error(400, 'AuthorizationHeaderMalformed', `${MALFORMED} ${failure.message}`);
      return new S3Error(400, 'AuthorizationHeaderMalformed', `${MALFORMED} the region '${failure.got}' is wrong; expecting '${failure.expected}'`, {
        Region: failure.expected,
      });
    case 'UnknownAccessKey':
      return new S3Error(403, 'InvalidAccessKeyId', UNKNOWN_KEY, { AWSAccessKeyId: failure.accessKeyId });
    case 'InvalidToken':
      // A temporary key without its token is unknown to S3; a token that does not belong to the key is invalid.
      return failure.tokenSent
        ? new S3Error(400, 'InvalidToken', 'The provided token is malformed or otherwise invalid.')
        : new S3Error(403, 'InvalidAccessKeyId', UNKNOWN_KEY, { AWSAccessKeyId: failure.accessKeyId });
    case 'Skewed':
      return new S3Error(403, 'RequestTimeTooSkewed', 'The difference between the request time and the current time is too large.', {
        RequestTime: failure.amzDate,
        ServerTime: failure.serverDate,
        MaxAllowedSkewMilliseconds: 900000,
      });
    case 'SignatureMismatch':
      return new S3Error(403, 'SignatureDoesNotMatch', SIGNATURE_MISMATCH, {
        AWSAccessKeyId: failure.accessKeyId,
        StringToSign: failure.stringToSign,
        SignatureProvided: failure.signatureProvided,
        CanonicalRequest: failure.canonicalRequest,
      });
  }
}

const base64Checksums: Record<string, ((data: Buffer) => string) | undefined> = {
  crc32: (data) => {
    const digest = Buffer.alloc(4);
    digest.writeUInt32BE(crc32(data));
    return digest.toString('base64');
  },
  sha1: (data) => createHash('sha1').update(data).digest('base64'),
  sha256: (data) => createHash('sha256').update(data).digest('base64'),
  // Node has no CRC32C or CRC64NVME: the fake takes those as sent.
  crc32c: undefined,
  crc64nvme: undefined,
};

const md5 = (data: Buffer) => createHash('md5').update(data).digest();
const quotedMd5 = (data: Buffer) => `"${md5(data).toString('hex')}"`;

/** The `aws-chunked` content encoding: `<hex size>[;chunk-signature=<sig>]\r\n<bytes>\r\n` … `0…\r\n<trailers>\r\n`. */
function decodeAwsChunked(body: Buffer): { chunks: Array<{ data: Buffer; signature?: string }>; trailers: Record<string, string> } {
  const malformed = () => new S3Error(400, 'IncompleteBody', 'The request body could not be decoded as aws-chunked content.');
  const chunks: Array<{ data: Buffer; signature?: string }> = [];
  let at = 0;
  const line = () => {
    const end = body.indexOf('\r\n', at);
    if (end < 0) throw malformed();
    const text = body.subarray(at, end).toString('latin1');
    at = end + 2;
    return text;
  };
  for (;;) {
    const [sizeHex, ...extensions] = line().split(';');
    const size = /^[0-9a-fA-F]+$/.test(sizeHex) ? parseInt(sizeHex, 16) : NaN;
    if (Number.isNaN(size) || at + size > body.length) throw malformed();
    const signature = extensions.find((e) => e.startsWith('chunk-signature='))?.slice('chunk-signature='.length);
    const data = body.subarray(at, at + size);
    at += size;
    chunks.push({ data, signature });
    if (size === 0) break;
    if (line() !== '') throw malformed();
  }
  const trailers: Record<string, string> = {};
  for (let text = at < body.length ? line() : ''; text !== ''; text = at < body.length ? line() : '') {
    const colon = text.indexOf(':');
    if (colon < 0) throw malformed();
    trailers[text.slice(0, colon).trim().toLowerCase()] = text.slice(colon + 1).trim();
  }
  return { chunks, trailers };
}

interface Payload {
  bytes: Buffer;
  checksum?: { algorithm: string; value: string };
}

/** The object bytes a request carries, after S3's payload checks (hash, aws-chunked decoding, chunk signatures, checksums). */
function receivePayload(req: http.IncomingMessage, body: Buffer, verified: VerifiedSignature): Payload {
  const declared = headerValue(req.headers, 'x-amz-content-sha256')!;
  let bytes = body;
  let trailers: Record<string, string> = {};
  if (/^[0-9a-f]{64}$/.test(declared)) {
    const computed = sha256Hex(body);
    if (computed !== declared) {
      throw new S3Error(400, 'XAmzContentSHA256Mismatch', "The provided 'x-amz-content-sha256' header does not match what was computed.", {
        ClientComputedContentSHA256: declared,
        S3ComputedContentSHA256: computed,
      });
    }
  } else if (declared === 'STREAMING-UNSIGNED-PAYLOAD-TRAILER' || declared === 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD') {
    const decoded = decodeAwsChunked(body);
    if (declared === 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD') verifyChunkSignatures(decoded.chunks, verified);
    bytes = Buffer.concat(decoded.chunks.map((c) => c.data));
    trailers = decoded.trailers;
    const decodedLength = headerValue(req.headers, 'x-amz-decoded-content-length');
    if (decodedLength === undefined) throw new S3Error(411, 'MissingContentLength', 'You must provide the Content-Length HTTP header.');
    if (Number(decodedLength) !== bytes.length) {
      throw new S3Error(400, 'IncompleteBody', 'You did not provide the number of bytes specified by the Content-Length HTTP header.');
    }
  } else if (declared !== 'UNSIGNED-PAYLOAD') {
    throw new S3Error(
      400,
      'InvalidArgument',
      'x-amz-content-sha256 must be UNSIGNED-PAYLOAD, STREAMING-UNSIGNED-PAYLOAD-TRAILER, STREAMING-AWS4-HMAC-SHA256-PAYLOAD or a valid sha256 value ' +
        '(the other streaming forms are not implemented by this fake).',
    );
  }
  verifyContentMd5(req, bytes);
  return { bytes, checksum: verifyChecksum(req, trailers, bytes) };
}

function verifyChunkSignatures(chunks: Array<{ data: Buffer; signature?: string }>, verified: VerifiedSignature): void {
  let previous = verified.signature;
  for (const chunk of chunks) {
    const expected = chunkSignature(verified, previous, chunk.data);
    if (!chunk.signature || chunk.signature.length !== expected.length || !timingSafeEqual(Buffer.from(chunk.signature), Buffer.from(expected))) {
      throw new S3Error(403, 'SignatureDoesNotMatch', SIGNATURE_MISMATCH, {
        AWSAccessKeyId: verified.credentials.accessKeyId,
        SignatureProvided: chunk.signature ?? '',
      });
    }
    previous = expected;
  }
}

function verifyContentMd5(req: http.IncomingMessage, bytes: Buffer): void {
  const sent = headerValue(req.headers, 'content-md5');
  if (sent !== undefined && sent !== md5(bytes).toString('base64')) {
    throw new S3Error(400, 'BadDigest', 'The Content-MD5 you specified did not match what we received.');
  }
}

/** The flexible checksum sent in a header or trailer, recomputed where Node can. */
function verifyChecksum(req: http.IncomingMessage, trailers: Record<string, string>, bytes: Buffer): Payload['checksum'] {
  for (const algorithm of Object.keys(base64Checksums)) {
    const name = `x-amz-checksum-${algorithm}`;
    const value = trailers[name] ?? headerValue(req.headers, name);
    if (value === undefined) continue;
    const compute = base64Checksums[algorithm];
    if (compute && compute(bytes) !== value) {
      throw new S3Error(400, 'BadDigest', `The ${algorithm.toUpperCase()} you specified did not match the calculated checksum.`);
    }
    return { algorithm, value };
  }
  return undefined;
}

function decodePath(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new S3Error(400, 'InvalidURI', "Couldn't parse the specified URI.", { URI: text });
  }
}

const metadataOf = (req: http.IncomingMessage) =>
  Object.fromEntries(
    Object.entries(req.headers)
      .filter(([name]) => name.startsWith('x-amz-meta-'))
      .map(([name, value]) => [name.slice('x-amz-meta-'.length), String(value)]),
  );

const metadataHeaders = (metadata: Record<string, string>) =>
  Object.fromEntries(Object.entries(metadata).map(([name, value]) => [`x-amz-meta-${name}`, value]));

const checksumHeader = (checksum: Payload['checksum']): Record<string, string> =>
  checksum ? { [`x-amz-checksum-${checksum.algorithm}`]: checksum.value } : {};

const xmlReply = (root: string, inner: string): FakeReply => ({ status: 200, body: xmlDocument(root, inner), headers: { 'content-type': 'application/xml' } });

export async function startFakeS3(opts: FakeS3Options = {}) {
  const region = opts.region ?? 'us-east-1';
  const credentials = opts.credentials ?? [TEST_AWS_CREDENTIALS];
  const state = {
    /** Objects by bucket, then key. */
    buckets: new Map<string, Map<string, S3Object>>((opts.buckets ?? []).map((name) => [name, new Map()])),
    /** Multipart uploads started and neither completed nor aborted, by upload id. */
    uploads: new Map<string, MultipartUpload>(),
    completedUploads: [] as CompletedUpload[],
    /** The most UploadPart requests in flight at once (how parallel a client uploads). */
    peakConcurrentParts: 0,
    sigv4: newSigV4Log(),
    /** Every request the fake received (filled by the kit). */
    requests: [] as RecordedRequest[],
  };
  let partsInFlight = 0;

  function bucketOf(name: string): Map<string, S3Object> {
    const bucket = state.buckets.get(name);
    if (!bucket) throw new S3Error(404, 'NoSuchBucket', 'The specified bucket does not exist', { BucketName: name });
    return bucket;
  }

  function storeObject(bucket: string, key: string, object: Omit<S3Object, 'lastModified'>): S3Object {
    const stored = { ...object, lastModified: new Date() };
    bucketOf(bucket).set(key, stored);
    return stored;
  }

  function authenticate(req: http.IncomingMessage, url: URL): VerifiedSignature {
    const reject = (error: S3Error): never => {
      state.sigv4.failures.push({ error: String(error.details.code), message: error.message, method: req.method ?? '', path: url.pathname });
      throw error;
    };
    if (headerValue(req.headers, 'authorization') !== undefined && headerValue(req.headers, 'x-amz-content-sha256') === undefined) {
      reject(new S3Error(400, 'InvalidRequest', 'Missing required header for this request: x-amz-content-sha256'));
    }
    const payloadHash = headerValue(req.headers, 'x-amz-content-sha256') ?? '';
    const received = { method: req.method ?? '', url: req.url ?? '/', headers: req.headers, payloadHash };
    const result = verifySigV4(received, { service: 's3', region, s3Path: true }, credentials);
    if (!result.ok) return reject(signatureError(result));
    // S3 requires every x-amz-* header to be signed, so none can be added on the way.
    const unsigned = Object.keys(req.headers).filter((name) => name.startsWith('x-amz-') && !result.signedHeaders.includes(name));
    if (unsigned.length > 0) {
      reject(new S3Error(403, 'AccessDenied', 'There were headers present in the request which were not signed', { HeadersNotSigned: unsigned.join(', ') }));
    }
    state.sigv4.verified++;
    return result;
  }

  function putObject(req: http.IncomingMessage, bucket: string, key: string, payload: Payload): FakeReply {
    const object = storeObject(bucket, key, {
      bytes: payload.bytes,
      contentType: headerValue(req.headers, 'content-type') ?? 'binary/octet-stream',
      etag: quotedMd5(payload.bytes),
      metadata: metadataOf(req),
      checksum: payload.checksum,
    });
    return { status: 200, headers: { etag: object.etag, ...checksumHeader(payload.checksum) } };
  }

  function getObject(req: http.IncomingMessage, bucket: string, key: string): FakeReply {
    const object = bucketOf(bucket).get(key);
    if (!object) throw new S3Error(404, 'NoSuchKey', 'The specified key does not exist.', { Key: key });
    const headers: Record<string, string> = {
      'content-type': object.contentType,
      etag: object.etag,
      'last-modified': object.lastModified.toUTCString(),
      'accept-ranges': 'bytes',
      ...metadataHeaders(object.metadata),
    };
    const range = byteRange(headerValue(req.headers, 'range'), object.bytes.length);
    if (range) {
      const bytes = object.bytes.subarray(range.start, range.end + 1);
      return {
        status: 206,
        body: req.method === 'HEAD' ? undefined : bytes,
        headers: { ...headers, 'content-length': String(bytes.length), 'content-range': `bytes ${range.start}-${range.end}/${object.bytes.length}` },
      };
    }
    if (object.checksum && headerValue(req.headers, 'x-amz-checksum-mode') === 'ENABLED') Object.assign(headers, checksumHeader(object.checksum));
    return { status: 200, body: req.method === 'HEAD' ? undefined : object.bytes, headers: { ...headers, 'content-length': String(object.bytes.length) } };
  }

  /** A single `bytes=` range (S3 serves one); anything else is ignored and the whole object sent, as S3 does. */
  function byteRange(header: string | undefined, size: number): { start: number; end: number } | undefined {
    const match = header ? /^bytes=(\d*)-(\d*)$/.exec(header.trim()) : null;
    if (!match || (match[1] === '' && match[2] === '')) return undefined;
    // `bytes=-N` is the last N bytes; `bytes=A-` runs to the end; an end past the object is cut to it.
    const [start, end] =
      match[1] === ''
        ? [Math.max(0, size - Number(match[2])), size - 1]
        : [Number(match[1]), match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1)];
    if (start >= size || start > end || (match[1] === '' && Number(match[2]) === 0)) {
      throw new S3Error(416, 'InvalidRange', 'The requested range is not satisfiable', { RangeRequested: header!, ActualObjectSize: size });
    }
    return { start, end };
  }

  function listObjectsV2(bucketName: string, query: URLSearchParams): FakeReply {
    const bucket = bucketOf(bucketName);
    const prefix = query.get('prefix') ?? '';
    const delimiter = query.get('delimiter') ?? '';
    const maxKeysParam = query.get('max-keys') ?? String(MAX_KEYS);
    if (!/^\d+$/.test(maxKeysParam)) {
      throw new S3Error(400, 'InvalidArgument', 'Provided max-keys not an integer or within integer range', { ArgumentName: 'max-keys' });
    }
    const maxKeys = Math.min(Number(maxKeysParam), MAX_KEYS);
    const token = query.get('continuation-token');
    const after = token === null ? (query.get('start-after') ?? '') : decodeContinuationToken(token);

    // Keys and common prefixes in order, each counted once toward max-keys, resuming after the cursor.
    const entries: Array<{ key: string; object?: S3Object }> = [];
    for (const key of [...bucket.keys()].sort()) {
      if (!key.startsWith(prefix) || key <= after) continue;
      const cut = delimiter ? key.indexOf(delimiter, prefix.length) : -1;
      if (cut < 0) entries.push({ key, object: bucket.get(key) });
      else if (entries.at(-1)?.key !== key.slice(0, cut + delimiter.length) && !after.startsWith(key.slice(0, cut + delimiter.length))) {
        entries.push({ key: key.slice(0, cut + delimiter.length) });
      }
    }
    const page = entries.slice(0, maxKeys);
    const truncated = page.length < entries.length;
    const contents = page
      .filter((e) => e.object)
      .map(({ key, object }) =>
        wrap(
          'Contents',
          fields({ Key: key, LastModified: object!.lastModified.toISOString(), ETag: object!.etag, Size: object!.bytes.length, StorageClass: 'STANDARD' }),
        ),
      );
    const commonPrefixes = page.filter((e) => !e.object).map(({ key }) => wrap('CommonPrefixes', el('Prefix', key)));
    const body = xmlDocument(
      'ListBucketResult',
      fields({
        Name: bucketName,
        Prefix: prefix,
        Delimiter: delimiter || undefined,
        MaxKeys: maxKeys,
        KeyCount: page.length,
        IsTruncated: truncated,
        ContinuationToken: token ?? undefined,
        NextContinuationToken: truncated ? Buffer.from(`v1:${page.at(-1)!.key}`).toString('base64') : undefined,
        StartAfter: query.get('start-after') ?? undefined,
      }) +
        contents.join('') +
        commonPrefixes.join(''),
    );
    return { status: 200, body, headers: { 'content-type': 'application/xml' } };
  }

  function decodeContinuationToken(token: string): string {
    const text = Buffer.from(token, 'base64').toString('utf8');
    if (!text.startsWith('v1:')) {
      throw new S3Error(400, 'InvalidArgument', 'The continuation token provided is incorrect', { ArgumentName: 'continuation-token' });
    }
    return text.slice(3);
  }

  function createMultipartUpload(req: http.IncomingMessage, bucket: string, key: string): FakeReply {
    bucketOf(bucket);
    const upload: MultipartUpload = {
      uploadId: randomBytes(48).toString('base64url'),
      bucket,
      key,
      initiated: new Date(),
      contentType: headerValue(req.headers, 'content-type') ?? 'binary/octet-stream',
      metadata: metadataOf(req),
      parts: new Map(),
    };
    state.uploads.set(upload.uploadId, upload);
    return xmlReply('InitiateMultipartUploadResult', fields({ Bucket: bucket, Key: key, UploadId: upload.uploadId }));
  }

  function uploadOf(uploadId: string | null, bucket: string, key: string): MultipartUpload {
    const upload = uploadId === null ? undefined : state.uploads.get(uploadId);
    if (!upload || upload.bucket !== bucket || upload.key !== key) {
      const message = 'The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed.';
      throw new S3Error(404, 'NoSuchUpload', message, { UploadId: uploadId ?? '' });
    }
    return upload;
  }

  function uploadPart(query: URLSearchParams, bucket: string, key: string, payload: Payload): FakeReply {
    const partNumber = Number(query.get('partNumber'));
    if (!Number.isInteger(partNumber) || partNumber < 1 || partNumber > MAX_PART_NUMBER) {
      throw new S3Error(400, 'InvalidArgument', `Part number must be an integer between 1 and ${MAX_PART_NUMBER}, inclusive`, {
        ArgumentName: 'partNumber',
        ArgumentValue: query.get('partNumber') ?? '',
      });
    }
    const upload = uploadOf(query.get('uploadId'), bucket, key);
    const etag = quotedMd5(payload.bytes);
    upload.parts.set(partNumber, { bytes: payload.bytes, etag });
    return { status: 200, headers: { etag, ...checksumHeader(payload.checksum) } };
  }

  function completeMultipartUpload(origin: string, query: URLSearchParams, bucket: string, key: string, body: Buffer): FakeReply {
    const upload = uploadOf(query.get('uploadId'), bucket, key);
    const listed = parseCompleteRequest(body.toString('utf8'));
    listed.forEach((part, i) => {
      if (i > 0 && part.partNumber <= listed[i - 1].partNumber) {
        const message = 'The list of parts was not in ascending order. Parts must be ordered by part number.';
        throw new S3Error(400, 'InvalidPartOrder', message, { UploadId: upload.uploadId });
      }
    });
    const parts = listed.map(({ partNumber, etag }) => {
      const part = upload.parts.get(partNumber);
      if (!part || part.etag.replace(/"/g, '') !== etag.replace(/"/g, '')) {
        const message =
          "One or more of the specified parts could not be found.  The part may not have been uploaded, or the specified entity tag may not match the part's entity tag.";
        throw new S3Error(400, 'InvalidPart', message, { UploadId: upload.uploadId, PartNumber: partNumber, ETag: etag });
      }
      return { partNumber, ...part };
    });
    parts.slice(0, -1).forEach((part) => {
      if (part.bytes.length < MIN_PART_SIZE) {
        throw new S3Error(400, 'EntityTooSmall', 'Your proposed upload is smaller than the minimum allowed object size.', {
          ProposedSize: part.bytes.length,
          MinSizeAllowed: MIN_PART_SIZE,
          PartNumber: part.partNumber,
          ETag: part.etag,
        });
      }
    });
    const etag = `"${md5(Buffer.concat(parts.map((p) => Buffer.from(p.etag.replace(/"/g, ''), 'hex')))).toString('hex')}-${parts.length}"`;
    storeObject(bucket, key, { bytes: Buffer.concat(parts.map((p) => p.bytes)), contentType: upload.contentType, etag, metadata: upload.metadata });
    state.uploads.delete(upload.uploadId);
    state.completedUploads.push({ bucket, key, uploadId: upload.uploadId, partSizes: parts.map((p) => p.bytes.length) });
    const location = `${origin}/${bucket}/${key.split('/').map(encodeURIComponent).join('/')}`;
    return xmlReply('CompleteMultipartUploadResult', fields({ Location: location, Bucket: bucket, Key: key, ETag: etag }));
  }

  function parseCompleteRequest(xml: string): Array<{ partNumber: number; etag: string }> {
    const parts = [...xml.matchAll(/<Part>([\s\S]*?)<\/Part>/g)].map(([, inner]) => ({
      partNumber: Number(/<PartNumber>\s*(\d+)\s*<\/PartNumber>/.exec(inner)?.[1]),
      etag: xmlUnescape(/<ETag>([\s\S]*?)<\/ETag>/.exec(inner)?.[1] ?? '').trim(),
    }));
    if (!/<CompleteMultipartUpload[\s>]/.test(xml) || parts.length === 0 || parts.some((p) => !Number.isInteger(p.partNumber) || p.etag === '')) {
      throw new S3Error(400, 'MalformedXML', 'The XML you provided was not well-formed or did not validate against our published schema');
    }
    return parts;
  }

  function abortMultipartUpload(query: URLSearchParams, bucket: string, key: string): FakeReply {
    state.uploads.delete(uploadOf(query.get('uploadId'), bucket, key).uploadId);
    return { status: 204 };
  }

  async function handle(req: http.IncomingMessage, url: URL, origin: string): Promise<FakeReply> {
    const body = await readBody(req);
    const verified = authenticate(req, url);
    const method = req.method ?? 'GET';
    const rawPath = (req.url ?? '/').split('?')[0];
    const slash = rawPath.indexOf('/', 1);
    const bucket = decodePath(rawPath.slice(1, slash < 0 ? undefined : slash));
    const key = slash < 0 ? '' : decodePath(rawPath.slice(slash + 1));
    const query = url.searchParams;
    const notImplemented = () => new S3Error(501, 'NotImplemented', 'A header you provided implies functionality that is not implemented');
    if (bucket === '') throw notImplemented();

    if (key === '') {
      bucketOf(bucket);
      if (method === 'HEAD') return { status: 200, headers: { 'x-amz-bucket-region': region } };
      if (method === 'GET' && query.get('list-type') === '2') return listObjectsV2(bucket, query);
      throw notImplemented();
    }
    if (method === 'PUT' && headerValue(req.headers, 'x-amz-copy-source') !== undefined) throw notImplemented();
    if (method === 'PUT' && query.has('uploadId')) return uploadPart(query, bucket, key, receivePayload(req, body, verified));
    if (method === 'PUT') return putObject(req, bucket, key, receivePayload(req, body, verified));
    if (method === 'GET' || method === 'HEAD') return getObject(req, bucket, key);
    if (method === 'POST' && query.has('uploads')) return createMultipartUpload(req, bucket, key);
    if (method === 'POST' && query.has('uploadId')) return completeMultipartUpload(origin, query, bucket, key, receivePayload(req, body, verified).bytes);
    if (method === 'DELETE' && query.has('uploadId')) return abortMultipartUpload(query, bucket, key);
    if (method === 'DELETE') {
      bucketOf(bucket).delete(key);
      return { status: 204 };
    }
    throw notImplemented();
  }

  const server = await startFakeServer({
    renderError,
    injectedError,
    async route(req, _res, url) {
      const isPart = req.method === 'PUT' && url.searchParams.has('uploadId');
      if (isPart) state.peakConcurrentParts = Math.max(state.peakConcurrentParts, ++partsInFlight);
      try {
        const reply = await handle(req, url, server.origin);
        return { ...reply, headers: { ...requestIds(), ...reply.headers } };
      } finally {
        if (isPart) partsInFlight--;
      }
    },
  });
  state.requests = server.requests;

  return {
    /** The endpoint for `S3Client({endpoint, forcePathStyle: true})`. */
    url: server.origin,
    region,
    state,
    /** Creates a bucket (idempotent). */
    createBucket(name: string): void {
      if (!state.buckets.has(name)) state.buckets.set(name, new Map());
    },
    /** Stores an object directly, as if uploaded (the bucket must exist). */
    putObject(bucket: string, key: string, content: Buffer | string, contentType = 'binary/octet-stream'): S3Object {
      const bytes = Buffer.from(content);
      return storeObject(bucket, key, { bytes, contentType, etag: quotedMd5(bytes), metadata: {} });
    },
    /** An object's bytes, or undefined. */
    getObject(bucket: string, key: string): Buffer | undefined {
      return state.buckets.get(bucket)?.get(key)?.bytes;
    },
    /** The next `times` (default 1) requests matching method and path prefix (e.g. `/bucket/`) fail. */
    failNext: server.failNext,
    /** The next `times` (default 1) matching requests are answered only after `ms`. */
    delayNext: server.delayNext,
    close: server.close,
  };
}
