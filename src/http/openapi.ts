import fs from 'node:fs';
import path from 'node:path';
import type { RequestHandler } from 'express';
import { projectRoot } from '../db/migrations';

/** The REST contract: `openapi.yaml` at the repository root (written by hand, checked by the tests). */
export const openApiPath = () => path.join(projectRoot(), 'openapi.yaml');

/**
 * `GET /v1/openapi.json`, without a key. The document is parsed once, on the first request rather
 * than at start-up: loading the YAML parser and parsing take ~0.2 s that a start need not wait for.
 */
export function openApiRoute(): RequestHandler {
  let body: string | undefined;
  return async (_req, res) => {
    if (body === undefined) {
      const { parse } = await import('yaml');
      body = JSON.stringify(parse(await fs.promises.readFile(openApiPath(), 'utf8')));
    }
    res.type('application/json').send(body);
  };
}
