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
  | 'internal';

interface KindInfo {
  status: number;
  type: string;
  graphqlCode: string;
}

const KINDS: Record<ErrorKind, KindInfo> = {
  invalid_request: { status: 400, type: 'invalid_request_error', graphqlCode: 'BAD_USER_INPUT' },
  payload_too_large: { status: 413, type: 'invalid_request_error', graphqlCode: 'BAD_USER_INPUT' },
  unsupported_media_type: { status: 415, type: 'invalid_request_error', graphqlCode: 'BAD_USER_INPUT' },
  unauthenticated: { status: 401, type: 'authentication_error', graphqlCode: 'UNAUTHENTICATED' },
  forbidden: { status: 403, type: 'permission_error', graphqlCode: 'FORBIDDEN' },
  not_found: { status: 404, type: 'not_found_error', graphqlCode: 'NOT_FOUND' },
  conflict: { status: 409, type: 'conflict_error', graphqlCode: 'CONFLICT' },
  rate_limited: { status: 429, type: 'rate_limit_error', graphqlCode: 'RATE_LIMITED' },
  // A provider or gateway lacking an operation is the caller's problem to route around: a 400.
  unsupported: { status: 400, type: 'invalid_request_error', graphqlCode: 'BAD_USER_INPUT' },
  provider: { status: 502, type: 'provider_error', graphqlCode: 'PROVIDER_ERROR' },
  internal: { status: 500, type: 'server_error', graphqlCode: 'INTERNAL_SERVER_ERROR' },
};

export interface ErrorDetails {
  /** The offending input field, in the caller's naming. */
  param?: string | null;
  /** A machine-readable code, e.g. `label_name_taken`. */
  code?: string | null;
  /** Overrides the kind's status (provider errors carry the provider's status). */
  status?: number;
}

export class GatewayError extends Error {
  readonly param: string | null;
  readonly code: string | null;
  readonly status: number;

  constructor(
    readonly kind: ErrorKind,
    message: string,
    details: ErrorDetails = {},
  ) {
    super(message);
    this.name = 'GatewayError';
    this.param = details.param ?? null;
    this.code = details.code ?? null;
    this.status = details.status ?? KINDS[kind].status;
  }

  get type(): string {
    return KINDS[this.kind].type;
  }

  get graphqlCode(): string {
    return KINDS[this.kind].graphqlCode;
  }

  /** The same error with `param` renamed, e.g. from a camelCase field to its REST spelling. */
  withParam(param: string | null): GatewayError {
    return new GatewayError(this.kind, this.message, { param, code: this.code, status: this.status });
  }
}

export const badRequest = (message: string, param?: string | null, code?: string) =>
  new GatewayError('invalid_request', message, { param, code });

export const notFound = (what: string, id?: string) =>
  new GatewayError('not_found', id === undefined ? `${what} not found` : `${what} '${id}' not found`, {
    code: 'not_found',
  });

export const conflict = (message: string, param?: string, code?: string) =>
  new GatewayError('conflict', message, { param, code });

export const forbidden = (message: string) => new GatewayError('forbidden', message);

export const unauthenticated = (message: string) =>
  new GatewayError('unauthenticated', message, { code: 'invalid_api_key' });

export const unsupported = (message: string, param?: string) =>
  new GatewayError('unsupported', message, { param, code: 'unsupported_operation' });

/** The error body every REST response uses (OpenAI's shape, so SDKs parse it). */
export interface ErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

export function errorBody(err: GatewayError): ErrorBody {
  return { error: { message: err.message, type: err.type, param: err.param, code: err.code } };
}

export const MASKED_INTERNAL = new GatewayError('internal', 'Internal server error', { code: 'internal_error' });
