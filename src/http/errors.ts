import type { ErrorRequestHandler, RequestHandler } from 'express';
import { databaseUnavailable } from '../db/outage';
import { GatewayError, MASKED_INTERNAL, badRequest, errorBody } from '../errors';
import type { Logger } from '../logger';
import { restPath } from './case';
import { JSON_TOO_DEEP } from './json-depth';

interface BodyParserError {
  type?: string;
  message?: string;
  status?: number;
}

/** Errors raised by express.json() carry a `type`; they are the caller's fault. */
function fromBodyParser(raw: unknown): GatewayError | null {
  if (typeof raw !== 'object' || raw === null) return null;
  const err: BodyParserError = raw;
  switch (err.type) {
    case 'entity.parse.failed':
      return badRequest(`Malformed JSON body: ${withoutSourceExcerpt(err.message)}`, null, 'invalid_json');
    case 'entity.too.large':
      return new GatewayError('payload_too_large', 'Request body too large', { code: 'body_too_large' });
    case JSON_TOO_DEEP:
      return badRequest(err.message ?? 'The JSON body is nested too deeply', null, 'json_too_deep');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new GatewayError('unsupported_media_type', err.message ?? 'Unsupported body encoding', { code: 'unsupported_encoding' });
    default:
      // The router's own: a path whose percent-encoding does not decode (`%ED%A0%80`, a lone surrogate's bytes).
      return err.status && err.status >= 400 && err.status < 500 ? badRequest(err.message ?? 'Bad request', null, 'invalid_request') : null;
  }
}

/**
 * V8's JSON.parse messages can quote the body (`Unexpected token 's', ..."api_key": sk-secr"...`),
 * and a body may hold secrets (integration credentials): the quoted excerpt is never echoed.
 */
function withoutSourceExcerpt(message: string | undefined): string {
  if (!message) return 'could not parse';
  const cut = message.replace(/,\s*(\.\.\.)?".*$/s, '').replace(/^Unexpected token '.*?'/s, 'Unexpected token');
  return cut.trim() || 'could not parse';
}

/**
 * A RangeError met while serving a request comes from what it sent: a value nested deeper than a walk
 * of it can go (beyond the body parser's depth limit, when that is raised), a date or size out of range.
 * The caller's mistake, not a 500; logged in case it was not.
 */
export function fromRangeError(err: unknown, logger: Pick<Logger, 'warn'>): GatewayError | null {
  if (!(err instanceof RangeError)) return null;
  logger.warn({ err }, 'request refused: RangeError while handling its input');
  return badRequest('The request could not be processed: a value in it is nested too deeply or out of range', null, 'invalid_request');
}

export function restErrorHandler(logger: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    let mapped = err instanceof GatewayError ? err : (databaseUnavailable(err) ?? fromBodyParser(err) ?? fromRangeError(err, logger));
    // Every request fails alike while the database is away: one debug line each, not an error.
    if (mapped?.kind === 'unavailable') logger.debug({ err, method: req.method, path: req.path }, 'database unavailable');
    if (!mapped) {
      logger.error({ err, method: req.method, path: req.path }, 'unhandled error');
      mapped = MASKED_INTERNAL;
    }
    if (res.headersSent) {
      res.destroy();
      return;
    }
    if (mapped.retryAfterSeconds !== null) res.setHeader('Retry-After', String(mapped.retryAfterSeconds));
    res.status(mapped.status).json(errorBody(mapped, restPath));
  };
}

export const notFoundRoute: RequestHandler = (req, _res, next) => {
  next(new GatewayError('not_found', `Unknown route: ${req.method} ${req.path}`, { code: 'unknown_route' }));
};

/** Bodies are JSON: a body of another type is refused, not ignored. */
export const requireJsonBody: RequestHandler = (req, _res, next) => {
  const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
  if (hasBody && !req.is('application/json')) {
    next(
      new GatewayError('unsupported_media_type', `Content-Type must be application/json (got '${req.headers['content-type'] ?? 'none'}')`, {
        code: 'unsupported_media_type',
      }),
    );
    return;
  }
  next();
};
