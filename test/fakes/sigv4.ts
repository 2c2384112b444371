/**
 * AWS Signature Version 4 checked the way AWS checks it, for the fake S3 and Bedrock servers: the
 * `Authorization` header is parsed, its credential scope compared with the request (access key,
 * date, region, service), the timestamp held to ±15 minutes, a session token required when the
 * credentials have one, and the signature recomputed from the request as received with the shared
 * secret. The canonical request is built here from the raw request, independently of the SDK's
 * signer, so a client (or the gateway's own signing) that encodes a path, query or header
 * differently from AWS is caught.
 *
 * Rules (AWS "Create a canonical request for Signature Version 4"):
 * - path: S3 encodes each segment once (the decoded key, re-encoded); every other service takes
 *   the path as sent, normalised, and encodes each segment again (`%3A` in a job ARN becomes `%253A`);
 * - query: names and values decoded, then encoded with AWS's unreserved set, sorted;
 * - headers: exactly those named in `SignedHeaders` (which must hold `host`, or `:authority` over
 *   HTTP/2, and `x-amz-date`), values trimmed, inner spaces collapsed;
 * - payload: the hex SHA-256 of the body, except on S3 where the `x-amz-content-sha256` header
 *   (a hash, `UNSIGNED-PAYLOAD` or `STREAMING-…`) is signed as it is.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type http from 'node:http';

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  /** Temporary (STS) credentials carry a token that must come as `x-amz-security-token`. */
  sessionToken?: string;
}

/** The shared test credentials: the key id and secret every fake AWS service accepts by default. */
export const TEST_AWS_CREDENTIALS: AwsCredentials = {
  accessKeyId: 'AKIAFAKETESTKEY00001',
  secretAccessKey: 'fake-secret-access-key-for-tests-only',
};

const SIGV4_ALGORITHM = 'AWS4-HMAC-SHA256';
/** How far `x-amz-date` may be from the server's clock. */
const MAX_CLOCK_SKEW_MS = 15 * 60 * 1000;
const EMPTY_SHA256 = createHash('sha256').digest('hex');

export interface ReceivedRequest {
  method: string;
  /** The request target as received (`req.url`): percent-encoded path and raw query. */
  url: string;
  headers: http.IncomingHttpHeaders;
  /** What the canonical request's last line holds (see the module comment). */
  payloadHash: string;
}

export interface SigV4Expectation {
  service: string;
  region: string;
  /** S3 encodes the path once; other services encode it twice. */
  s3Path: boolean;
}

/** A request whose signature checked out, and what chunk signatures (S3 streaming uploads) chain from. */
export interface VerifiedSignature {
  credentials: AwsCredentials;
  signedHeaders: string[];
  signature: string;
  amzDate: string;
  scope: string;
  signingKey: Buffer;
}

export type SigV4Failure =
  | { code: 'MissingAuthentication'; message: string }
  | { code: 'MalformedAuthorization'; message: string }
  | { code: 'WrongScope'; message: string; field: 'date' | 'region' | 'service'; got: string; expected: string }
  | { code: 'UnknownAccessKey'; message: string; accessKeyId: string }
  | { code: 'InvalidToken'; message: string; accessKeyId: string; tokenSent: boolean }
  | { code: 'Skewed'; message: string; amzDate: string; serverDate: string }
  | {
      code: 'SignatureMismatch';
      message: string;
      accessKeyId: string;
      canonicalRequest: string;
      stringToSign: string;
      signatureProvided: string;
    };

export type SigV4Result = ({ ok: true } & VerifiedSignature) | ({ ok: false } & SigV4Failure);

const AUTHORIZATION =
  /^AWS4-HMAC-SHA256 Credential=([^/,\s]+)\/(\d{8})\/([^/,\s]+)\/([^/,\s]+)\/aws4_request, ?SignedHeaders=([a-z0-9-;:]+), ?Signature=([0-9a-f]{64})$/;
const INVALID_TOKEN = 'The security token included in the request is invalid.';
const SIGNATURE_MISMATCH =
  'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method.';
const AMZ_DATE = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/;

/** AWS's URI encoding: everything but the unreserved characters `A-Za-z0-9-._~`, UTF-8, upper-case hex. */
function uriEncode(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** A percent-decoded component; a malformed escape stays as it is, which then fails the signature. */
function decode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

export const sha256Hex = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data, 'utf8').digest();

function signingKey(secretAccessKey: string, date: string, region: string, service: string): Buffer {
  let key = hmac(`AWS4${secretAccessKey}`, date);
  for (const part of [region, service, 'aws4_request']) key = hmac(key, part);
  return key;
}

function canonicalPath(rawPath: string, s3Path: boolean): string {
  if (s3Path)
    return rawPath
      .split('/')
      .map((segment) => uriEncode(decode(segment)))
      .join('/');
  const segments: string[] = [];
  for (const segment of rawPath.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment);
  }
  const trailing = segments.length > 0 && rawPath.endsWith('/') ? '/' : '';
  return `/${segments.map(uriEncode).join('/')}${trailing}`;
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Query parameters decoded, re-encoded the AWS way, sorted by name and then value. */
function canonicalQuery(rawQuery: string): string {
  return rawQuery
    .split('&')
    .filter((pair) => pair !== '')
    .map((pair) => {
      const at = pair.indexOf('=');
      const [name, value] = at < 0 ? [pair, ''] : [pair.slice(0, at), pair.slice(at + 1)];
      return [uriEncode(decode(name)), uriEncode(decode(value))];
    })
    .filter(([name]) => name.toLowerCase() !== 'x-amz-signature')
    .sort(([a, av], [b, bv]) => compare(a, b) || compare(av, bv))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
}

/** A header's value as signed; HTTP/2 carries the host as `:authority`, and a client may sign either name. */
export function headerValue(headers: http.IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name] ?? (name === 'host' ? headers[':authority'] : name === ':authority' ? headers.host : undefined);
  return Array.isArray(value) ? value.join(',') : value;
}

const canonicalHeaderValue = (value: string) => value.trim().replace(/\s+/g, ' ');

function canonicalRequest(req: ReceivedRequest, signedHeaders: string[], s3Path: boolean): string {
  const at = req.url.indexOf('?');
  const [rawPath, rawQuery] = at < 0 ? [req.url, ''] : [req.url.slice(0, at), req.url.slice(at + 1)];
  return [
    req.method,
    canonicalPath(rawPath, s3Path),
    canonicalQuery(rawQuery),
    ...signedHeaders.map((name) => `${name}:${canonicalHeaderValue(headerValue(req.headers, name) ?? '')}`),
    '',
    signedHeaders.join(';'),
    req.payloadHash,
  ].join('\n');
}

function amzDateMs(amzDate: string): number {
  const [, y, mo, d, h, mi, s] = AMZ_DATE.exec(amzDate)!;
  return Date.UTC(+y, +mo - 1, +d, +h, +mi, +s);
}

const toAmzDate = (ms: number) =>
  new Date(ms)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');

/** AWS's wording for a request outside the allowed skew. */
function skewMessage(amzDate: string, now: number): string {
  const sent = amzDateMs(amzDate);
  return sent < now
    ? `Signature expired: ${amzDate} is now earlier than ${toAmzDate(now - MAX_CLOCK_SKEW_MS)} (${toAmzDate(now)} - 15 min.)`
    : `Signature not yet current: ${amzDate} is still later than ${toAmzDate(now + MAX_CLOCK_SKEW_MS)} (${toAmzDate(now)} + 15 min.)`;
}

/** Checks one request's SigV4 `Authorization` header against the known credentials. */
export function verifySigV4(req: ReceivedRequest, expect: SigV4Expectation, known: AwsCredentials[], now = Date.now()): SigV4Result {
  const authorization = headerValue(req.headers, 'authorization');
  if (!authorization) return { ok: false, code: 'MissingAuthentication', message: 'Missing Authentication Token' };
  const match = AUTHORIZATION.exec(authorization);
  if (!match) {
    const message = authorization.startsWith(`${SIGV4_ALGORITHM} `)
      ? "Authorization header requires 'Credential', 'SignedHeaders' and 'Signature' parameters, as Credential=<key>/<date>/<region>/<service>/aws4_request."
      : `Unsupported authorization type; only ${SIGV4_ALGORITHM} is accepted.`;
    return { ok: false, code: 'MalformedAuthorization', message };
  }
  const [, accessKeyId, credentialDate, region, service, signedHeaderList, signatureProvided] = match;
  const signedHeaders = signedHeaderList.split(';');
  const amzDate = headerValue(req.headers, 'x-amz-date') ?? '';
  if (!AMZ_DATE.test(amzDate)) {
    const message = 'Authorization requires an x-amz-date header in ISO 8601 basic format (YYYYMMDDTHHMMSSZ).';
    return { ok: false, code: 'MalformedAuthorization', message };
  }
  // Over HTTP/2 the SDK signs `:authority` in place of `host`; AWS takes either.
  if (!signedHeaders.includes('host') && !signedHeaders.includes(':authority')) {
    return { ok: false, code: 'MalformedAuthorization', message: "'Host' or ':authority' must be a 'SignedHeader' in the AWS Authorization." };
  }
  if (!signedHeaders.includes('x-amz-date')) {
    return { ok: false, code: 'MalformedAuthorization', message: "'X-Amz-Date' must be a 'SignedHeader' in the AWS Authorization." };
  }

  const wrong = (field: 'date' | 'region' | 'service', got: string, expected: string, message: string): SigV4Result => ({
    ok: false,
    code: 'WrongScope',
    field,
    got,
    expected,
    message,
  });
  const day = amzDate.slice(0, 8);
  if (credentialDate !== day) {
    const message = `Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '${credentialDate}' != '${day}', from '${amzDate}'.`;
    return wrong('date', credentialDate, day, message);
  }
  if (service !== expect.service) return wrong('service', service, expect.service, `Credential should be scoped to correct service: '${expect.service}'.`);
  if (region !== expect.region) return wrong('region', region, expect.region, `Credential should be scoped to a valid region, not '${region}'.`);

  const credentials = known.find((c) => c.accessKeyId === accessKeyId);
  if (!credentials) return { ok: false, code: 'UnknownAccessKey', accessKeyId, message: INVALID_TOKEN };
  const token = headerValue(req.headers, 'x-amz-security-token');
  if (token !== credentials.sessionToken) return { ok: false, code: 'InvalidToken', accessKeyId, tokenSent: token !== undefined, message: INVALID_TOKEN };
  if (Math.abs(now - amzDateMs(amzDate)) > MAX_CLOCK_SKEW_MS) {
    return { ok: false, code: 'Skewed', amzDate, serverDate: toAmzDate(now), message: skewMessage(amzDate, now) };
  }

  const scope = `${credentialDate}/${region}/${service}/aws4_request`;
  const canonical = canonicalRequest(req, signedHeaders, expect.s3Path);
  const stringToSign = [SIGV4_ALGORITHM, amzDate, scope, sha256Hex(canonical)].join('\n');
  const key = signingKey(credentials.secretAccessKey, credentialDate, region, service);
  const expected = hmac(key, stringToSign).toString('hex');
  if (!timingSafeEqual(Buffer.from(expected), Buffer.from(signatureProvided))) {
    return {
      ok: false,
      code: 'SignatureMismatch',
      accessKeyId,
      canonicalRequest: canonical,
      stringToSign,
      signatureProvided,
      message: SIGNATURE_MISMATCH,
    };
  }
  return { ok: true, credentials, signedHeaders, signature: signatureProvided, amzDate, scope, signingKey: key };
}

/** The signature of one `aws-chunked` chunk, chained from the previous one (the request's signature first). */
export function chunkSignature(verified: VerifiedSignature, previous: string, chunk: Buffer): string {
  const stringToSign = [`${SIGV4_ALGORITHM}-PAYLOAD`, verified.amzDate, verified.scope, previous, EMPTY_SHA256, sha256Hex(chunk)].join('\n');
  return hmac(verified.signingKey, stringToSign).toString('hex');
}

/** What a fake's signature checks saw, for tests: how many requests passed, and each rejection with the error it answered. */
export interface SigV4Log {
  verified: number;
  failures: Array<{ error: string; message: string; method: string; path: string }>;
}

export const newSigV4Log = (): SigV4Log => ({ verified: 0, failures: [] });
