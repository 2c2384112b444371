/**
 * /console as the gateway serves it, in production mode: the built page with its security headers,
 * cached hashed assets, and a clear 404 in the error shape when the build is missing.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import { restErrorHandler } from '../../src/http/errors';
import { createLogger } from '../../src/logger';
import { consoleBuildDir, consoleRoutes } from '../../src/modules/console/console.routes';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { CONSOLE_DIST, ensureConsoleBuilt } from './browser';

let gw: TestGateway;

beforeAll(async () => {
  ensureConsoleBuilt();
  gw = await startTestGateway({ NODE_ENV: 'production' });
}, 120_000);

afterAll(async () => {
  await gw.stop();
});

describe('GET /console', () => {
  it('finds the build beside the sources', () => {
    expect(consoleBuildDir()).toBe(CONSOLE_DIST);
  });

  it('redirects /console to the page and serves it without a key, with a strict content security policy', async () => {
    const redirect = await fetch(`${gw.url}/console`, { redirect: 'manual' });
    expect(redirect.status).toBe(301);
    expect(redirect.headers.get('location')).toBe('/console/');

    const res = await fetch(`${gw.url}/console/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('cache-control')).toBe('no-cache');
    expect(res.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(res.headers.get('content-security-policy')).toContain("connect-src 'self'");
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    const html = await res.text();
    expect(html).toBe(readFileSync(join(CONSOLE_DIST, 'index.html'), 'utf8'));
    // Nothing from another origin: every script and stylesheet is one of the build's files.
    expect(html).not.toMatch(/(src|href)="https?:/);
  });

  it('caches the hashed assets for good', async () => {
    const html = await (await fetch(`${gw.url}/console/`)).text();
    const script = /src="(\/console\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    const res = await fetch(`${gw.url}${script}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/javascript/);
    expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
  });

  it('answers 404 in the error shape for a file the build does not have', async () => {
    const res = await fetch(`${gw.url}/console/assets/nothing.js`);
    expect(res.status).toBe(404);
    expect((await res.json()).error.type).toBe('not_found_error');
  });

  it('shows the explorer to a browser at /graphql outside production, from the build (no CDN), while clients still get GraphQL', async () => {
    const dev = await startTestGateway();
    try {
      const res = await fetch(`${dev.url}/graphql`, { headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
      const html = await res.text();
      expect(html).toBe(readFileSync(join(CONSOLE_DIST, 'explorer.html'), 'utf8'));
      expect(html).not.toMatch(/(src|href)="https?:/);
      // Its script is the build's, served at the path the page names.
      const script = /src="(\/console\/assets\/[^"]+\.js)"/.exec(html)?.[1];
      expect((await fetch(`${dev.url}${script}`)).status).toBe(200);
      // A GraphQL client (asking for JSON) gets GraphQL, not the page.
      const query = await fetch(`${dev.url}/graphql?query=${encodeURIComponent('{ __typename }')}`, {
        headers: { accept: 'application/json', 'apollo-require-preflight': 'true', 'x-gateway-api-key': dev.key },
      });
      expect(await query.json()).toEqual({ data: { __typename: 'Query' } });
    } finally {
      await dev.stop();
    }
  });

  it('says how to build the console when the build is missing', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'console-empty-'));
    const app = express();
    app.use('/console', consoleRoutes(empty));
    app.use(restErrorHandler(createLogger('silent')));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/console/`);
      expect(res.status).toBe(404);
      const body = await res.json();
      expect(body.error.code).toBe('console_not_built');
      expect(body.error.message).toContain('npm run build:console');
    } finally {
      server.close();
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
