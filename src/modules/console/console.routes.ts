import { existsSync } from 'node:fs';
import path from 'node:path';
import express, { type RequestHandler, type Response, type Router } from 'express';
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

function secure(res: Response): void {
  res.setHeader('Content-Security-Policy', CONTENT_SECURITY_POLICY);
  res.setHeader('Referrer-Policy', 'no-referrer');
}

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
    secure(res);
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

const page = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body><h1>${title}</h1>${body}</body></html>\n`;

/** What a browser finds at /graphql in production: what the endpoint is, and where the explorer is. */
const PRODUCTION_PAGE = page(
  'GraphQL endpoint',
  '<p>This is the GraphQL endpoint of the model gateway. Send operations as <code>POST /graphql</code> with a JSON body ' +
    '(<code>{"query": …, "variables": …}</code>) and your API key in the <code>x-gateway-api-key</code> header.</p>' +
    '<p>To explore the schema, open the <a href="/console/explorer.html">GraphQL explorer</a> of the console.</p>',
);

const NOT_BUILT_PAGE = page(
  'GraphQL explorer',
  '<p>The explorer is part of the console, which is not built: run <code>npm run build:console</code> (npm install does it).</p>' +
    '<p>GraphQL clients send <code>POST /graphql</code> with the API key in <code>x-gateway-api-key</code>.</p>',
);

/**
 * A browser opening /graphql (a GET that prefers HTML to JSON): outside production the console's
 * offline explorer (GraphiQL with the schema built in, nothing from a CDN); in production a short page
 * saying what the endpoint is. GraphQL clients, which ask for JSON, go on to the GraphQL face.
 */
export function graphqlPageRoute(dir: string, production: boolean): RequestHandler {
  return (req, res, next) => {
    if (req.accepts(['application/json', 'application/graphql-response+json', 'text/html']) !== 'text/html') {
      next();
      return;
    }
    secure(res);
    res.setHeader('Cache-Control', 'no-cache');
    const explorer = path.join(dir, 'explorer.html');
    if (!production && existsSync(explorer)) res.sendFile(explorer);
    else res.type('html').send(production ? PRODUCTION_PAGE : NOT_BUILT_PAGE);
  };
}
