import { Router, type Request, type RequestHandler } from 'express';

/** Whether a request has a body as the JSON parser decides it (type-is): a length, even 0, or a transfer encoding. */
const hasBody = (req: Request) => req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined;

/**
 * `handlers` on a request that carries a body; a request without one skips them in one step, since
 * they would do nothing to it (the JSON body middlewares on a GET: most requests).
 */
export function whenBody(handlers: RequestHandler[]): RequestHandler {
  const chain = Router().use(handlers);
  return (req, res, next) => {
    if (!hasBody(req)) return next();
    chain(req, res, next);
  };
}
