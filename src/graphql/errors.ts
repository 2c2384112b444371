import { unwrapResolverError } from '@apollo/server/errors';
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { ArgumentValidationError } from 'type-graphql';
import { GatewayError, MASKED_INTERNAL } from '../errors';
import type { Logger } from '../logger';

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
  'QUERY_TOO_COMPLEX',
]);

function fromGatewayError(formatted: GraphQLFormattedError, err: GatewayError): GraphQLFormattedError {
  return {
    message: err.message,
    locations: formatted.locations,
    path: formatted.path,
    extensions: { code: err.graphqlCode, param: err.param, errorCode: err.code, status: err.status },
  };
}

/** The GraphQL face's error mapper: domain errors to `extensions.code`, unknown errors logged and masked. */
export function formatGraphQLError(logger: Logger) {
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const original = unwrapResolverError(error);
    if (original instanceof GatewayError) {
      if (original.kind === 'internal') logger.error({ err: original }, 'internal error in GraphQL resolver');
      return fromGatewayError(formatted, original);
    }
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

export function unauthenticatedGraphQLError(err: GatewayError): GraphQLError {
  return new GraphQLError(err.message, { extensions: { code: err.graphqlCode, errorCode: err.code, http: { status: err.status } } });
}
