import type { RequestHandler } from 'express';
import { refuseUnstorableText } from '../validation/text';

/**
 * Text Postgres cannot store (NUL, unpaired surrogates) is refused where REST input enters, as a 400
 * naming the field, before any route reads it: query strings here, JSON bodies right after parsing,
 * path parameters as routes read them (`pathParam`), multipart fields in the multipart reader.
 */
export const refuseUnstorableQuery: RequestHandler = (req, _res, next) => {
  // Express parses `req.query` on each read: a URL without a query string has nothing to check.
  if (req.url.includes('?')) refuseUnstorableText(req.query);
  next();
};

export const refuseUnstorableBody: RequestHandler = (req, _res, next) => {
  refuseUnstorableText(req.body);
  next();
};
