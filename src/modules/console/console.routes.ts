import { existsSync } from 'node:fs';
import path from 'node:path';
import express, { type Router } from 'express';
import { GatewayError } from '../../errors';

/**
 * The page may only talk to this gateway and load its own files: no CDN, no inline script, no
 * framing. Inline styles stay allowed because uPlot and GraphiQL position elements with them.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

/** The console's build output (`npm run build:console`), found from this file in src/ and in dist/src/ alike. */
export function consoleBuildDir(): string {
  let dir = __dirname;
  while (!existsSync(path.join(dir, 'package.json')) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  return path.join(dir, 'console', 'dist');
}

/**
 * Serves the console's static build at /console. Hashed assets are cached for good; the HTML pages are
 * revalidated so a rebuild shows at once. The API key never reaches the server through this route:
 * the page keeps it in session storage and sends it as a header to /v1 and /graphql.
 */
export function consoleRoutes(dir: string): Router {
  const router = express.Router();
  router.use((_req, res, next) => {
    res.setHeader('Content-Security-Policy', CONTENT_SECURITY_POLICY);
    res.setHeader('Referrer-Policy', 'no-referrer');
    next();
  });
  if (!existsSync(path.join(dir, 'index.html'))) {
    router.use(() => {
      throw new GatewayError('not_found', 'The console is not built: run `npm run build:console` (npm install does it)', { code: 'console_not_built' });
    });
    return router;
  }
  router.use(
    express.static(dir, {
      index: 'index.html',
      redirect: true,
      setHeaders: (res, file) => {
        const hashed = file.includes(`${path.sep}assets${path.sep}`);
        res.setHeader('Cache-Control', hashed ? 'public, max-age=31536000, immutable' : 'no-cache');
      },
    }),
  );
  return router;
}
