import { unwrapResolverError } from '@apollo/server/errors';
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { ArgumentValidationError } from 'type-graphql';
import type { ApolloServerPlugin } from '@apollo/server';
import { databaseUnavailable } from '../db/outage';
import { GatewayError, MASKED_INTERNAL } from '../errors';
import { fromRangeError } from '../http/errors';
import type { Logger } from '../logger';
import { graphqlPath } from './field-names';
import { LIMIT_CODES, QueryLimitError, tokenLimitOf } from './limits';

/** Codes that Apollo and graphql-js give to the caller's mistakes; kept as they are. */
const CLIENT_CODES = new Set([
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
  'BAD_USER_INPUT',
  'BAD_REQUEST',
  'PERSISTED_QUERY_NOT_FOUND',
  'PERSISTED_QUERY_NOT_SUPPORTED',
  'OPERATION_RESOLUTION_FAILURE',
  'UNAUTHENTICATED',
  'FORBIDDEN',
  'NOT_FOUND',
  'CONFLICT',
  'PROVIDER_ERROR',
  'RATE_LIMITED',
  'PAYLOAD_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  // Not the caller's fault, but already mapped (a database outage while building the context): kept as it is.
  'SERVICE_UNAVAILABLE',
  ...Object.values(LIMIT_CODES),
]);

/** graphql-js's "Did you mean …?" hints name fields and enum values: hidden in production. */
const SUGGESTION = / ?Did you mean(.+?)\?$/;

/** The limit error behind an error: Apollo wraps validation errors (and gives them its own code). */
function limitError(error: unknown): QueryLimitError | null {
  if (error instanceof QueryLimitError) return error;
  if (error instanceof GraphQLError && error.originalError instanceof QueryLimitError) return error.originalError;
  return null;
}

function fromGatewayError(formatted: GraphQLFormattedError, err: GatewayError): GraphQLFormattedError {
  const { param, message } = err.render(graphqlPath);
  return {
    message,
    locations: formatted.locations,
    path: formatted.path,
    extensions: {
      code: err.graphqlCode,
      param,
      errorCode: err.answerCode,
      status: err.status,
      ...(err.retryAfterSeconds === null ? {} : { retryAfter: err.retryAfterSeconds }),
    },
  };
}

/** The GraphQL face's error mapper: domain errors to `extensions.code`, unknown errors logged and masked. */
export function formatGraphQLError(logger: Logger, options: { hideSuggestions?: boolean } = {}) {
  const format = mapError(logger);
  if (!options.hideSuggestions) return format;
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const shown = format(formatted, error);
    return SUGGESTION.test(shown.message) ? { ...shown, message: shown.message.replace(SUGGESTION, '') } : shown;
  };
}

const VARIABLE_VALUE = /^(Variable "\$[^"]+") got invalid value /;

/** Messages of the errors behind `error`, innermost last. */
function causeMessages(error: unknown): string[] {
  const out: string[] = [];
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; depth++) {
    out.push(e.message);
    e = 'originalError' in e ? e.originalError : undefined;
  }
  return out;
}

/**
 * graphql-js words a bad variable as `Variable "$input" got invalid value <the whole value> at
 * "input.slug"; <reason>`, quoting what the caller sent, which may hold secrets (integration
 * credentials). The value is dropped; the variable, the path and the reason stay.
 */
function withoutVariableValue(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError {
  const head = VARIABLE_VALUE.exec(formatted.message);
  if (!head) return formatted;
  const reason = causeMessages(error).find((m) => m !== formatted.message && formatted.message.endsWith(`; ${m}`));
  let message = `${head[1]} got an invalid value`;
  if (reason !== undefined) {
    const before = formatted.message.slice(0, formatted.message.length - reason.length - 2);
    const at = / at "([^"]+)"$/.exec(before);
    message += `${at ? ` at "${at[1]}"` : ''}: ${reason}`;
  }
  return { ...formatted, message };
}

function mapError(logger: Logger) {
  return (unredacted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const formatted = withoutVariableValue(unredacted, error);
    const limit = limitError(error);
    if (limit) {
      const { http: _status, ...extensions } = limit.extensions;
      return { message: limit.message, locations: formatted.locations, extensions };
    }
    // graphql-js's `maxTokens` stops the parser with a syntax error: a limit like the others.
    const maxTokens = formatted.extensions?.code === 'GRAPHQL_PARSE_FAILED' ? tokenLimitOf(formatted.message) : null;
    if (maxTokens !== null) return { message: `Query has more than ${maxTokens} tokens`, extensions: { code: LIMIT_CODES.tokens, maxTokens } };
    const unwrapped = unwrapResolverError(error);
    const original = databaseUnavailable(unwrapped) ?? unwrapped;
    if (original instanceof GatewayError) {
      if (original.kind === 'internal') logger.error({ err: original }, 'internal error in GraphQL resolver');
      return fromGatewayError(formatted, original);
    }
    const outOfRange = fromRangeError(original instanceof GraphQLError ? original.originalError : original, logger);
    if (outOfRange) return fromGatewayError(formatted, outOfRange);
    if (original instanceof ArgumentValidationError) {
      return { message: 'Argument validation failed', locations: formatted.locations, path: formatted.path, extensions: { code: 'BAD_USER_INPUT' } };
    }
    const code = formatted.extensions?.code;
    if (typeof code === 'string' && CLIENT_CODES.has(code)) {
      const { stacktrace: _hidden, ...extensions } = formatted.extensions ?? {};
      return { ...formatted, extensions };
    }
    // graphql-js reports bad variable values and coercion failures without a code: they are the caller's.
    if (original instanceof GraphQLError && !original.originalError && !formatted.path) {
      return { message: formatted.message, locations: formatted.locations, extensions: { code: 'BAD_USER_INPUT' } };
    }
    logger.error({ err: original }, 'unhandled error in GraphQL request');
    return fromGatewayError(formatted, MASKED_INTERNAL);
  };
}

/** A GatewayError raised before any resolver runs (building the context), with its HTTP status and `Retry-After`. */
export function contextGraphQLError(err: GatewayError): GraphQLError {
  // Apollo reads `http.headers` as a Map when the key is there at all.
  const http =
    err.retryAfterSeconds === null ? { status: err.status } : { status: err.status, headers: new Map([['retry-after', String(err.retryAfterSeconds)]]) };
  return new GraphQLError(err.message, { extensions: { code: err.graphqlCode, errorCode: err.answerCode, http } });
}

/**
 * A database outage met by a resolver: the answer carries `Retry-After`, and when no data came back
 * at all its status is the error's (503) rather than 200, so load balancers and clients see it.
 */
export function unavailablePlugin(): ApolloServerPlugin {
  return {
    requestDidStart: () =>
      Promise.resolve({
        willSendResponse: ({ response }) => {
          const result = response.body.kind === 'single' ? response.body.singleResult : null;
          const unavailable = result?.errors?.find((e) => e.extensions?.code === 'SERVICE_UNAVAILABLE');
          if (result && unavailable) {
            const { retryAfter, status } = unavailable.extensions ?? {};
            if (typeof retryAfter === 'number') response.http.headers.set('retry-after', String(retryAfter));
            if ((result.data === null || result.data === undefined) && typeof status === 'number') response.http.status = status;
          }
          return Promise.resolve();
        },
      }),
  };
}
