import cors from 'cors';
import type { RequestHandler } from 'express';

/**
 * CORS for both faces, configured once (GATEWAY_CORS_ORIGINS). It runs before authentication, so a
 * browser's preflight (OPTIONS, which carries no key) is answered here with 204. Request headers
 * are reflected rather than listed: client mode reads many `x-gateway-*` provider settings.
 *
 * Preflights go through the `cors` package. Every other request only needs the origin headers, which
 * depend on its Origin alone; they are set here directly, as `cors` sets them (`*` for a wildcard;
 * otherwise the origin when it is listed, and `Vary: Origin` always), without the options object and
 * callbacks `cors` builds on every request.
 */
export function corsPolicy(origins: readonly string[]): RequestHandler {
  const wildcard = origins.includes('*');
  const preflight = cors({ origin: wildcard ? '*' : [...origins], methods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'], maxAge: 600 });
  const listed = new Set(origins);
  return (req, res, next) => {
    if (req.method === 'OPTIONS') return preflight(req, res, next);
    if (wildcard) res.setHeader('Access-Control-Allow-Origin', '*');
    else {
      const origin = req.headers.origin;
      if (origin && listed.has(origin)) res.setHeader('Access-Control-Allow-Origin', origin);
      res.vary('Origin');
    }
    next();
  };
}
