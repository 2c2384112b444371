/**
 * What AWS's restJson1 services (the Bedrock control plane and runtime) share in the fakes: the
 * error shape (`{"message"}` body, error name in `x-amzn-ErrorType`, HTTP status per error), the
 * answers to a bad signature, Smithy constraint checks worded as AWS words them, and a kit server
 * that verifies SigV4 on every request before its routes run.
 */
import { randomUUID } from 'node:crypto';
import type http from 'node:http';
import { FakeHttpError, readBody, startFakeServer, type FakeReply } from './kit';
import { newSigV4Log, sha256Hex, verifySigV4, type AwsCredentials, type SigV4Failure } from './sigv4';

/** An AWS JSON error: `type` goes to `x-amzn-ErrorType`, the message to the body. */
export class AwsError extends FakeHttpError {
  constructor(status: number, type: string, message: string) {
    super(status, message, { type });
  }
}

export const validationError = (message: string) => new AwsError(400, 'ValidationException', message);
export const notFound = (message: string) => new AwsError(404, 'ResourceNotFoundException', message);
export const conflict = (message: string) => new AwsError(400, 'ConflictException', message);

/** AWS's per-response request id. */
export const requestIdHeader = () => ({ 'x-amzn-RequestId': randomUUID() });

function renderError(e: FakeHttpError): FakeReply {
  const type = typeof e.details.type === 'string' ? e.details.type : 'InternalServerException';
  return { status: e.status, body: { message: e.message }, headers: { 'x-amzn-ErrorType': type, ...requestIdHeader() } };
}

/** Bedrock's error (and default message) for an injected failure of each status; statuses are the ones of the API models. */
const INJECTED: Record<number, [string, string]> = {
  400: ['ValidationException', 'Input validation failed. Check your request parameters and retry the request.'],
  401: ['UnrecognizedClientException', 'The security token included in the request is invalid.'],
  403: ['AccessDeniedException', "You don't have access to the model with the specified model ID."],
  404: ['ResourceNotFoundException', 'The specified resource ARN was not found. Check the ARN and try your request again.'],
  408: ['ModelTimeoutException', 'The request took too long to process. Processing time exceeded the model timeout length.'],
  424: ['ModelErrorException', 'The request failed due to an error while processing the model.'],
  429: ['ThrottlingException', 'Too many requests, please wait before trying again.'],
  500: ['InternalServerException', 'An internal server error occurred. Retry your request.'],
  503: ['ServiceUnavailableException', 'The service isn’t currently available. Try again later.'],
};

function injectedError(status: number, options: { message?: string }): AwsError {
  const [type, message] = INJECTED[status] ?? INJECTED[500];
  return new AwsError(status, type, options.message ?? message);
}

/** What AWS's JSON services answer for a signature that does not check out (all 403). */
function signatureError(failure: SigV4Failure): AwsError {
  switch (failure.code) {
    case 'MissingAuthentication':
      return new AwsError(403, 'MissingAuthenticationTokenException', failure.message);
    case 'MalformedAuthorization':
      return new AwsError(403, 'IncompleteSignatureException', failure.message);
    case 'UnknownAccessKey':
    case 'InvalidToken':
      return new AwsError(403, 'UnrecognizedClientException', failure.message);
    case 'WrongScope':
    case 'Skewed':
      return new AwsError(403, 'InvalidSignatureException', failure.message);
    case 'SignatureMismatch':
      // AWS spells out what it signed, which is what one needs to find an encoding mistake.
      return new AwsError(
        403,
        'InvalidSignatureException',
        `${failure.message} Consult the service documentation for details.\n\n` +
          `The Canonical String for this request should have been\n'${failure.canonicalRequest}'\n\n` +
          `The String-to-Sign should have been\n'${failure.stringToSign}'\n`,
      );
  }
}

export interface StringRule {
  required?: boolean;
  min?: number;
  max?: number;
  pattern?: RegExp;
  enum?: readonly string[];
}

/**
 * Smithy constraint checks on a request, collected and reported together the way AWS reports them:
 * `2 validation errors detected: Value 'x' at 'jobName' failed to satisfy constraint: Member must …; …`.
 */
export class Constraints {
  private readonly errors: string[] = [];

  fail(path: string, value: unknown, constraint: string): void {
    const shown = value === undefined || value === null ? 'null' : `'${typeof value === 'string' ? value : JSON.stringify(value)}'`;
    this.errors.push(`Value ${shown} at '${path}' failed to satisfy constraint: ${constraint}`);
  }

  /** Checks a string member; true when it is present and valid. */
  string(path: string, value: unknown, rule: StringRule): value is string {
    const before = this.errors.length;
    if (value === undefined || value === null) {
      if (rule.required) this.fail(path, value, 'Member must not be null');
      return false;
    }
    if (typeof value !== 'string') {
      this.fail(path, value, 'Member must be a string');
      return false;
    }
    if (rule.min !== undefined && value.length < rule.min) this.fail(path, value, `Member must have length greater than or equal to ${rule.min}`);
    if (rule.max !== undefined && value.length > rule.max) this.fail(path, value, `Member must have length less than or equal to ${rule.max}`);
    if (rule.pattern && !rule.pattern.test(value)) this.fail(path, value, `Member must satisfy regular expression pattern: ${rule.pattern.source}`);
    if (rule.enum && !rule.enum.includes(value)) this.fail(path, value, `Member must satisfy enum value set: [${rule.enum.join(', ')}]`);
    return this.errors.length === before;
  }

  /** Checks an integer member in a range; true when it is present and valid. */
  integer(path: string, value: unknown, rule: { required?: boolean; min?: number; max?: number }): value is number {
    if (value === undefined || value === null) {
      if (rule.required) this.fail(path, value, 'Member must not be null');
      return false;
    }
    if (typeof value !== 'number' || !Number.isInteger(value)) {
      this.fail(path, value, 'Member must be an integer');
      return false;
    }
    if (rule.min !== undefined && value < rule.min) this.fail(path, value, `Member must have value greater than or equal to ${rule.min}`);
    else if (rule.max !== undefined && value > rule.max) this.fail(path, value, `Member must have value less than or equal to ${rule.max}`);
    else return true;
    return false;
  }

  /** Reads a date-time query parameter as epoch milliseconds (undefined when absent), failing a malformed one. */
  timestamp(name: string, query: URLSearchParams): number | undefined {
    const value = query.get(name);
    if (value === null) return undefined;
    const ms = Date.parse(value);
    if (Number.isNaN(ms)) this.fail(name, value, 'Member must be a timestamp in date-time format');
    return ms;
  }

  /** Checks that a structure member is a JSON object; true when present and one. */
  object(path: string, value: unknown, required = false): value is Record<string, unknown> {
    if (value === undefined || value === null) {
      if (required) this.fail(path, value, 'Member must not be null');
      return false;
    }
    if (typeof value !== 'object' || Array.isArray(value)) {
      this.fail(path, value, 'Member must be a structure');
      return false;
    }
    return true;
  }

  /** Throws the collected errors as one ValidationException. */
  check(): void {
    const n = this.errors.length;
    if (n > 0) throw validationError(`${n} validation error${n === 1 ? '' : 's'} detected: ${this.errors.join('; ')}`);
  }
}

/** The request body as a JSON object (an empty body is `{}`, as for AWS's input-less operations). */
export function jsonBody(body: Buffer): Record<string, unknown> {
  if (body.length === 0) return {};
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // answered below
  }
  throw validationError('Malformed input request, please reformat your input and try again.');
}

/** A URL path segment as the client meant it (ids and ARNs arrive percent-encoded). */
export function pathSegment(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw validationError(`Malformed path segment: ${raw}`);
  }
}

export interface AwsJsonRequest {
  req: http.IncomingMessage;
  res: http.ServerResponse;
  method: string;
  /** The path segments after the leading slash, still percent-encoded. */
  segments: string[];
  query: URLSearchParams;
  body: Buffer;
}

export interface AwsJsonServerOptions {
  region: string;
  credentials: AwsCredentials[];
  /** The SigV4 signing name (`bedrock` for both Bedrock planes). */
  service: string;
  http2?: boolean;
  /** Answers a request whose signature checked out; undefined for an unknown path. */
  route(request: AwsJsonRequest): Promise<FakeReply | void | undefined> | FakeReply | void | undefined;
}

/** A kit server for one AWS restJson1 service: SigV4 first (non-S3 rules), then the routes, errors as AWS words them. */
export async function startAwsJsonServer(opts: AwsJsonServerOptions) {
  const sigv4 = newSigV4Log();
  const server = await startFakeServer({
    renderError,
    injectedError,
    http2: opts.http2,
    async route(req, res, url) {
      const body = await readBody(req);
      const method = req.method ?? 'GET';
      const verified = verifySigV4(
        { method, url: req.url ?? '/', headers: req.headers, payloadHash: sha256Hex(body) },
        { service: opts.service, region: opts.region, s3Path: false },
        opts.credentials,
      );
      if (!verified.ok) {
        const error = signatureError(verified);
        sigv4.failures.push({ error: String(error.details.type), message: error.message, method, path: url.pathname });
        throw error;
      }
      sigv4.verified++;
      const segments = (req.url ?? '/').split('?')[0].split('/').slice(1);
      const reply = await opts.route({ req, res, method, segments, query: url.searchParams, body });
      if (reply === undefined && !res.headersSent) {
        throw new AwsError(404, 'UnknownOperationException', `No operation of this fake matches ${method} ${url.pathname}`);
      }
      return reply ? { ...reply, headers: { ...requestIdHeader(), ...reply.headers } } : undefined;
    },
  });
  return { ...server, sigv4 };
}

/**
 * One page of a list operation paged by an opaque `nextToken` (Bedrock's List* operations): the token
 * is only good for the query (the `boundTo` parameters) that produced it, as AWS's are.
 */
export function tokenPage<T>(items: T[], query: URLSearchParams, boundTo: string[], maxResults: number): { page: T[]; nextToken?: string } {
  const filters = boundTo.map((name) => query.get(name) ?? '').join('\u0000');
  const offset = query.has('nextToken') ? pageOffset(query.get('nextToken')!, filters) : 0;
  const page = items.slice(offset, offset + maxResults);
  const more = offset + page.length < items.length;
  return { page, nextToken: more ? Buffer.from(JSON.stringify({ offset: offset + page.length, filters })).toString('base64') : undefined };
}

function pageOffset(token: string, filters: string): number {
  try {
    const parsed = JSON.parse(Buffer.from(token, 'base64').toString('utf8')) as { offset?: unknown; filters?: unknown };
    if (Number.isInteger(parsed.offset) && parsed.filters === filters) return parsed.offset as number;
  } catch {
    // answered below
  }
  throw validationError('The pagination token is invalid or does not belong to this query.');
}

export interface ListedJob {
  name: string;
  status: string;
  time: Date;
}

/**
 * Bedrock's job listing (ListModelCustomizationJobs, ListModelInvocationJobs): `maxResults` 1–1000,
 * `statusEquals`, `nameContains`, a time window (`{timeParam}After`/`Before`), `sortBy=CreationTime`,
 * `sortOrder` (newest first by default), each checked as AWS checks them, then paged by `nextToken`.
 */
export function listJobsPage<T>(
  items: T[],
  view: (item: T) => ListedJob,
  query: URLSearchParams,
  rules: { statuses: readonly string[]; timeParam: string; namePattern: RegExp },
): { page: T[]; nextToken?: string } {
  const c = new Constraints();
  const maxResults = query.has('maxResults') ? Number(query.get('maxResults')) : undefined;
  c.integer('maxResults', maxResults, { min: 1, max: 1000 });
  c.string('statusEquals', query.get('statusEquals') ?? undefined, { enum: rules.statuses });
  c.string('sortBy', query.get('sortBy') ?? undefined, { enum: ['CreationTime'] });
  c.string('sortOrder', query.get('sortOrder') ?? undefined, { enum: ['Ascending', 'Descending'] });
  c.string('nameContains', query.get('nameContains') ?? undefined, { min: 1, max: 63, pattern: rules.namePattern });
  const after = c.timestamp(`${rules.timeParam}After`, query);
  const before = c.timestamp(`${rules.timeParam}Before`, query);
  c.check();

  const status = query.get('statusEquals');
  const name = query.get('nameContains');
  const kept = items.filter((item) => {
    const job = view(item);
    const ms = job.time.getTime();
    return (
      (!status || job.status === status) && (!name || job.name.includes(name)) && (after === undefined || ms > after) && (before === undefined || ms < before)
    );
  });
  const ordered = query.get('sortOrder') === 'Ascending' ? kept : kept.reverse();
  const boundTo = ['statusEquals', 'nameContains', `${rules.timeParam}After`, `${rules.timeParam}Before`, 'sortOrder'];
  return tokenPage(ordered, query, boundTo, maxResults ?? 1000);
}
