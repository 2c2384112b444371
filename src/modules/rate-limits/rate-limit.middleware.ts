import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import type { Caller } from '../../auth/scope';
import { GatewayError } from '../../errors';
import type { RateLimiter, RateLimitState } from './rate-limiter';

/** OpenAI's header spelling of a duration: `1s`, `6m0s`. */
export function formatReset(ms: number): string {
  const seconds = Math.max(1, Math.ceil(ms / 1000));
  return seconds < 60 ? `${seconds}s` : `${Math.floor(seconds / 60)}m${seconds % 60}s`;
}

function setHeaders(res: Response, state: RateLimitState): void {
  res.setHeader('x-ratelimit-limit-requests', String(state.limit));
  res.setHeader('x-ratelimit-remaining-requests', String(state.remaining));
  res.setHeader('x-ratelimit-reset-requests', formatReset(state.resetMs));
}

const rateLimitError = () =>
  new GatewayError('rate_limited', 'Rate limit reached for requests: retry after the time in Retry-After', { code: 'rate_limit_exceeded' });

/**
 * Counts the request against its API key (set on `res.locals.caller` by authentication, which runs
 * first) and refuses it with a 429 over the limit. Every answer to an authenticated request carries
 * the `x-ratelimit-*` headers. A request without a caller passes: the face refuses it itself.
 */
export function rateLimit(limiter: RateLimiter): RequestHandler {
  return async (_req, res, next) => {
    const caller = knownCaller(res);
    if (!caller) {
      next();
      return;
    }
    const state = await limiter.consume(caller.keyId);
    setHeaders(res, state);
    if (state.allowed) {
      next();
      return;
    }
    res.setHeader('retry-after', String(Math.max(1, Math.ceil(state.resetMs / 1000))));
    next(rateLimitError());
  };
}

/** The 429 of `rateLimit` in GraphQL's error shape (the REST face's error handler renders its own). */
export const graphqlRateLimitErrors: ErrorRequestHandler = (err: unknown, _req, res, next) => {
  if (!(err instanceof GatewayError) || err.kind !== 'rate_limited') {
    next(err);
    return;
  }
  res.status(err.status).json({ errors: [{ message: err.message, extensions: { code: err.graphqlCode } }] });
};

/** The caller authentication has put on the response, if it ran and succeeded. */
function knownCaller(res: Response | undefined): Caller | undefined {
  return res?.locals.caller;
}

/**
 * For a face that authenticates later (GraphQL, in its context): looks the key up now so the request
 * can be counted, leaving a missing or bad key for the face to refuse in its own shape (the lookup is
 * made once per request: the face gets the same answer).
 */
export function identifyCaller(authenticate: (req: Request) => Promise<Caller>): RequestHandler {
  return async (req, res, next) => {
    try {
      res.locals.caller = await authenticate(req);
    } catch {
      // Refused by the face itself, with its own error.
    }
    next();
  };
}
