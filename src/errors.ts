/**
 * The gateway's one error type. Services throw it; each transport maps it once:
 * REST to an HTTP status and OpenAI's error body, GraphQL to `extensions.code`.
 */
export type ErrorKind =
  | 'invalid_request'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'unauthenticated'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'rate_limited'
  | 'unsupported'
  | 'provider'
  | 'unavailable'
  | 'internal';

interface KindInfo {
  status: number;
  type: string;
  graphqlCode: string;
  /** The `code` of an error raised without a more precise one: every answer carries a code a client can switch on. */
  code: string;
}

const KINDS: Record<ErrorKind, KindInfo> = {
  invalid_request: { status: 400, type: 'invalid_request_error', graphqlCode: 'BAD_USER_INPUT', code: 'invalid_request' },
  payload_too_large: { status: 413, type: 'invalid_request_error', graphqlCode: 'BAD_USER_INPUT', code: 'payload_too_large' },
  unsupported_media_type: { status: 415, type: 'invalid_request_error', graphqlCode: 'BAD_USER_INPUT', code: 'unsupported_media_type' },
  unauthenticated: { status: 401, type: 'authentication_error', graphqlCode: 'UNAUTHENTICATED', code: 'unauthenticated' },
  forbidden: { status: 403, type: 'permission_error', graphqlCode: 'FORBIDDEN', code: 'forbidden' },
  not_found: { status: 404, type: 'not_found_error', graphqlCode: 'NOT_FOUND', code: 'not_found' },
  conflict: { status: 409, type: 'conflict_error', graphqlCode: 'CONFLICT', code: 'conflict' },
  rate_limited: { status: 429, type: 'rate_limit_error', graphqlCode: 'RATE_LIMITED', code: 'rate_limit_exceeded' },
  // A provider or gateway lacking an operation is the caller's problem to route around: a 400.
  unsupported: { status: 400, type: 'invalid_request_error', graphqlCode: 'BAD_USER_INPUT', code: 'unsupported_operation' },
  provider: { status: 502, type: 'provider_error', graphqlCode: 'PROVIDER_ERROR', code: 'provider_error' },
  // A dependency of the gateway (its database) is out of reach: the caller should retry (`Retry-After`).
  unavailable: { status: 503, type: 'service_unavailable', graphqlCode: 'SERVICE_UNAVAILABLE', code: 'service_unavailable' },
  internal: { status: 500, type: 'server_error', graphqlCode: 'INTERNAL_SERVER_ERROR', code: 'internal_error' },
};

/** Where in an input a problem is: field names in the services' (camelCase) spelling, array indexes as numbers. */
export type FieldPath = readonly (string | number)[];

export interface ErrorDetails {
  /**
   * The offending input field, in the services' spelling; each face renders it in its own (REST
   * `method.supervised.hyperparameters.n_epochs`, GraphQL `method.hyperparameters.nEpochs`). A string
   * is a one-field path.
   */
  path?: FieldPath | string | null;
  /** The field exactly as the caller spelled it, for errors raised at a face's own edge; shown as it is. */
  param?: string | null;
  /** The message is a reason about the field (`must not be empty`): faces prefix it with the field's name. */
  aboutField?: boolean;
  /** A machine-readable code, e.g. `label_name_taken`; without one, the kind's (`invalid_request`, `not_found`…). */
  code?: string | null;
  /** Overrides the kind's status (provider errors carry the provider's status). */
  status?: number;
  /** What led to it (kept for diagnosis; never part of an answer). */
  cause?: unknown;
  /** Seconds after which the caller may try again (REST: `Retry-After`). */
  retryAfterSeconds?: number;
}

export class GatewayError extends Error {
  readonly path: FieldPath | null;
  readonly param: string | null;
  readonly aboutField: boolean;
  readonly code: string | null;
  readonly status: number;
  readonly retryAfterSeconds: number | null;

  constructor(
    readonly kind: ErrorKind,
    message: string,
    details: ErrorDetails = {},
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'GatewayError';
    this.path = typeof details.path === 'string' ? [details.path] : (details.path ?? null);
    this.param = details.param ?? null;
    this.aboutField = details.aboutField ?? false;
    this.code = details.code ?? null;
    this.status = details.status ?? KINDS[kind].status;
    this.retryAfterSeconds = details.retryAfterSeconds ?? null;
  }

  get type(): string {
    return KINDS[this.kind].type;
  }

  get graphqlCode(): string {
    return KINDS[this.kind].graphqlCode;
  }

  /** The code an answer shows: the precise one, else the kind's, never null. */
  get answerCode(): string {
    return this.code ?? KINDS[this.kind].code;
  }

  /** The same error about another field (a face renaming its own arguments, see graphql/field-names.ts). */
  atPath(path: FieldPath): GatewayError {
    const { kind, message, param, aboutField, code, status } = this;
    return new GatewayError(kind, message, { path, param, aboutField, code, status, retryAfterSeconds: this.retryAfterSeconds ?? undefined });
  }

  /** The same error, its message followed by what the caller can do about it. */
  withHint(hint: string): GatewayError {
    const { kind, message, path, param, aboutField, code, status } = this;
    return new GatewayError(kind, `${message} (${hint})`, {
      path,
      param,
      aboutField,
      code,
      status,
      cause: this,
      retryAfterSeconds: this.retryAfterSeconds ?? undefined,
    });
  }

  /** The parameter and message as a face shows them, given how it spells a path. */
  render(spell: (path: FieldPath) => string): { param: string | null; message: string } {
    const param = this.param ?? (this.path?.length ? spell(this.path) : null);
    return { param, message: this.aboutField && param ? `${param}: ${this.message}` : this.message };
  }
}

/** The code of a provider call that got no answer (refused connection, unknown host…), and of a hosted job that never reached its provider. */
export const PROVIDER_UNREACHABLE = 'provider_unreachable';

export const badRequest = (message: string, path?: FieldPath | string | null, code?: string) => new GatewayError('invalid_request', message, { path, code });

/** A field of the input is wrong: `reason` says how (`must not be empty`); faces name the field. */
export const invalidField = (path: FieldPath | string, reason: string, code = 'invalid_request') =>
  new GatewayError('invalid_request', reason, { path, code, aboutField: true });

export const notFound = (what: string, id?: string) =>
  new GatewayError('not_found', id === undefined ? `${what} not found` : `${what} '${id}' not found`, {
    code: 'not_found',
  });

export const conflict = (message: string, path?: FieldPath | string, code?: string) => new GatewayError('conflict', message, { path, code });

export const forbidden = (message: string) => new GatewayError('forbidden', message);

export const unauthenticated = (message: string) => new GatewayError('unauthenticated', message, { code: 'invalid_api_key' });

export const unsupported = (message: string, path?: FieldPath | string) => new GatewayError('unsupported', message, { path, code: 'unsupported_operation' });

/** The error body every REST response uses (OpenAI's shape, so SDKs parse it). */
export interface ErrorBody {
  error: { message: string; type: string; param: string | null; code: string };
}

export function errorBody(err: GatewayError, spell: (path: FieldPath) => string): ErrorBody {
  const { param, message } = err.render(spell);
  return { error: { message, type: err.type, param, code: err.answerCode } };
}

export const MASKED_INTERNAL = new GatewayError('internal', 'Internal server error', { code: 'internal_error' });

/** The `code` of a Node.js system error (`ENOENT`, `EEXIST`…), if `err` is one. */
export function errnoCode(err: unknown): string | undefined {
  // Checked by shape: errors from another realm (Node's own, seen from a test sandbox) fail `instanceof Error`.
  return typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string' ? err.code : undefined;
}

/** Whatever was thrown, as an Error (a string or object thrown by a dependency gets wrapped). */
export const asError = (err: unknown): Error =>
  err instanceof Error ? err : new Error(typeof err === 'object' && err !== null && 'message' in err ? String(err.message) : String(err));
