import fs from 'node:fs';
import path from 'node:path';
import type { RequestHandler } from 'express';
import YAML from 'yaml';
import { projectRoot } from '../db/migrations';

/** The REST contract: `openapi.yaml` at the repository root (written by hand, checked by the tests). */
export const openApiPath = () => path.join(projectRoot(), 'openapi.yaml');

/** Parses the document once; `GET /v1/openapi.json` serves it without a key. */
export function openApiRoute(): RequestHandler {
  const document: unknown = YAML.parse(fs.readFileSync(openApiPath(), 'utf8'));
  const body = JSON.stringify(document);
  return (_req, res) => {
    res.type('application/json').send(body);
  };
}
