import cors from 'cors';
import type { RequestHandler } from 'express';

/**
 * CORS for both faces, configured once (GATEWAY_CORS_ORIGINS). It runs before authentication, so a
 * browser's preflight (OPTIONS, which carries no key) is answered here with 204. Request headers
 * are reflected rather than listed: client mode reads many `x-gateway-*` provider settings.
 */
export function corsPolicy(origins: readonly string[]): RequestHandler {
  return cors({
    origin: origins.includes('*') ? '*' : [...origins],
    methods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
    maxAge: 600,
  });
}
