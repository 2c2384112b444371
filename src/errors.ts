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
  code: ErrorCode;
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

/**
 * Every code the gateway answers with (REST `error.code`, GraphQL `extensions.errorCode`), with the
 * kind — hence the HTTP status and error type, see KINDS — it comes with. A GatewayError takes only
 * codes of its kind (checked by tsc); a provider's own code is passed on as a {@link ProviderCode}.
 */
export const ERROR_CODES = {
  invalid_request: 'invalid_request',
  missing_setting: 'invalid_request',
  invalid_setting: 'invalid_request',
  setting_not_overridable: 'invalid_request',
  unsupported_parameter: 'invalid_request',
  invalid_cursor: 'invalid_request',
  immutable_field: 'invalid_request',
  invalid_filename: 'invalid_request',
  invalid_file_purpose: 'invalid_request',
  invalid_file_id: 'invalid_request',
  invalid_id: 'invalid_request',
  invalid_dataset: 'invalid_request',
  invalid_json: 'invalid_request',
  json_too_deep: 'invalid_request',
  invalid_upload: 'invalid_request',
  upload_aborted: 'invalid_request',
  empty_file: 'invalid_request',
  too_many_parts: 'payload_too_large',
  invalid_integration_ref: 'invalid_request',
  invalid_multipart: 'invalid_request',
  too_many_files: 'invalid_request',
  too_many_fields: 'invalid_request',
  unknown_field: 'invalid_request',
  invalid_field: 'invalid_request',
  missing_file: 'invalid_request',
  invalid_text: 'invalid_request',
  unknown_entity_type: 'invalid_request',
  invalid_batch_file: 'invalid_request',
  batch_not_cancellable: 'invalid_request',
  unknown_model: 'invalid_request',
  unsupported_encoding: 'unsupported_media_type',
  invalid_s3_uri: 'invalid_request',
  integration_changed: 'invalid_request',
  invalid_idempotency_key: 'invalid_request',
  job_not_cancellable: 'invalid_request',
  prompt_too_large: 'payload_too_large',
  deployment_required: 'invalid_request',
  default_label: 'invalid_request',
  last_organisation_key: 'conflict',
  file_in_use: 'conflict',
  file_too_large: 'payload_too_large',
  body_too_large: 'payload_too_large',
  multipart_too_large: 'payload_too_large',
  unsupported_media_type: 'unsupported_media_type',
  invalid_api_key: 'unauthenticated',
  unauthenticated: 'unauthenticated',
  forbidden: 'forbidden',
  conflict: 'conflict',
  payload_too_large: 'payload_too_large',
  provider_error: 'provider',
  service_unavailable: 'unavailable',
  too_many_failed_authentications: 'rate_limited',
  rate_limit_exceeded: 'rate_limited',
  not_found: 'not_found',
  unknown_route: 'not_found',
  model_not_found: 'not_found',
  partial_not_found: 'invalid_request',
  label_name_taken: 'conflict',
  partial_slug_taken: 'conflict',
  workspace_slug_taken: 'conflict',
  integration_slug_taken: 'conflict',
  idempotency_key_in_use: 'conflict',
  idempotency_key_reused: 'invalid_request',
  unsupported_provider: 'unsupported',
  unsupported_operation: 'unsupported',
  unsupported_model: 'invalid_request',
  provider_unreachable: 'provider',
  provider_bad_answer: 'provider',
  signed_url_host_refused: 'provider',
  token_exchange_failed: 'provider',
  database_unavailable: 'unavailable',
  database_disk_full: 'unavailable',
  request_cancelled: 'invalid_request',
  internal_error: 'internal',
  integration_credentials_unreadable: 'internal',
  console_not_built: 'not_found',
} as const satisfies Record<string, ErrorKind>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** The codes of one kind. */
export type CodeOf<K extends ErrorKind> = { [C in ErrorCode]: (typeof ERROR_CODES)[C] extends K ? C : never }[ErrorCode];

declare const fromProvider: unique symbol;
/** A code a provider answered with, relayed as it is (provider errors only). */
export type ProviderCode = string & { readonly [fromProvider]: true };
export const providerCode = (code: string): ProviderCode => code as ProviderCode;

/** What `code` may be for an error of kind `K`. */
export type CodeFor<K extends ErrorKind> = CodeOf<K> | (K extends 'provider' ? ProviderCode : never);

/** Where in an input a problem is: field names in the services' (camelCase) spelling, array indexes as numbers. */
export type FieldPath = readonly (string | number)[];

export interface ErrorDetails<K extends ErrorKind = ErrorKind> {
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
  /** A machine-readable code of the kind (ERROR_CODES), e.g. `label_name_taken`; without one, the kind's (`invalid_request`, `not_found`…). */
  code?: CodeFor<K> | null;
  /** Overrides the kind's status (provider errors carry the provider's status). */
  status?: number;
  /** What led to it (kept for diagnosis; never part of an answer). */
  cause?: unknown;
  /** Seconds after which the caller may try again (REST: `Retry-After`). */
  retryAfterSeconds?: number;
}

/** A kind with its message and details: `code` must be one of the kind's (checked by tsc at every `new GatewayError`). */
type ErrorArgs = { [K in ErrorKind]: [kind: K, message: string, details?: ErrorDetails<K>] }[ErrorKind];

export class GatewayError extends Error {
  readonly path: FieldPath | null;
  readonly param: string | null;
  readonly aboutField: boolean;
  readonly code: ErrorCode | ProviderCode | null;
  readonly status: number;
  readonly retryAfterSeconds: number | null;
  readonly kind: ErrorKind;

  constructor(...[kind, message, details = {}]: ErrorArgs) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'GatewayError';
    this.kind = kind;
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
  get answerCode(): ErrorCode | ProviderCode {
    return this.code ?? KINDS[this.kind].code;
  }

  /** The same error about another field (a face renaming its own arguments, see graphql/field-names.ts). */
  atPath(path: FieldPath): GatewayError {
    return this.copy(this.message, { path });
  }

  /** The same error, its message followed by what the caller can do about it. */
  withHint(hint: string): GatewayError {
    return this.copy(`${this.message} (${hint})`, { cause: this });
  }

  private copy(message: string, changes: Pick<ErrorDetails, 'path' | 'cause'>): GatewayError {
    const { path, param, aboutField, code, status } = this;
    const details: ErrorDetails = { path, param, aboutField, code, status, retryAfterSeconds: this.retryAfterSeconds ?? undefined, ...changes };
    // Its code was checked against its kind when it was made.
    return new GatewayError(...([this.kind, message, details] as ErrorArgs));
  }

  /** The parameter and message as a face shows them, given how it spells a path. */
  render(spell: (path: FieldPath) => string): { param: string | null; message: string } {
    const param = this.param ?? (this.path?.length ? spell(this.path) : null);
    return { param, message: this.aboutField && param ? `${param}: ${this.message}` : this.message };
  }
}

/** The code of a provider call that got no answer (refused connection, unknown host…), and of a hosted job that never reached its provider. */
export const PROVIDER_UNREACHABLE = 'provider_unreachable' satisfies ErrorCode;

export const badRequest = (message: string, path?: FieldPath | string | null, code?: CodeOf<'invalid_request'>) =>
  new GatewayError('invalid_request', message, { path, code });

/** A field of the input is wrong: `reason` says how (`must not be empty`); faces name the field. */
export const invalidField = (path: FieldPath | string, reason: string, code: CodeOf<'invalid_request'> = 'invalid_request') =>
  new GatewayError('invalid_request', reason, { path, code, aboutField: true });

export const notFound = (what: string, id?: string) =>
  new GatewayError('not_found', id === undefined ? `${what} not found` : `${what} '${id}' not found`, {
    code: 'not_found',
  });

export const conflict = (message: string, path?: FieldPath | string, code?: CodeOf<'conflict'>) => new GatewayError('conflict', message, { path, code });

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
