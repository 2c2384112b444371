import { pipeline } from 'node:stream/promises';
import { Router, type Response } from 'express';
import type { Scope } from '../../auth/scope';
import { GatewayError } from '../../errors';
import { receiveMultipartUpload } from '../../http/multipart';
import { callerOf, json, pathParam, queryParam, tenantRequest } from '../../http/rest';
import type { Services } from '../../services';
import { toDeletedFileJson, toFileJson, toFileListJson } from './file.mapper';
import type { GatewayFile } from './file.repository';
import { claimRequest, idempotencyKeyOf, sendReplay } from '../idempotency/idempotency.middleware';

/** Datasets are JSON Lines; anything else is opaque bytes. */
function contentTypeOf(file: GatewayFile): string {
  return file.purpose === 'fine-tune' || file.filename.toLowerCase().endsWith('.jsonl') ? 'application/jsonl' : 'application/octet-stream';
}

/** RFC 6266 / 5987: an ASCII fallback plus the exact UTF-8 name. */
function contentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}

/** Streams a file's content as a 200. */
async function send(stream: NodeJS.ReadableStream, res: Response): Promise<void> {
  res.status(200);
  try {
    await pipeline(stream, res);
  } catch {
    // The client went away, or the store failed mid-way: the status line is gone, so the
    // connection is cut rather than ending a response that looks complete.
    res.destroy();
  }
}

export function fileRoutes(services: Services): Router {
  const router = Router();
  const { files } = services;

  router.post('/', async (req, res) => {
    let chosen: Scope;
    let key: string | undefined;
    try {
      // Checked before the upload streams in, from the query (or the key's own workspace);
      // a `workspace_id` form field, known only at the end, may still name another.
      ({ scope: chosen } = await tenantRequest(services.workspaces, req, res));
      key = idempotencyKeyOf(req);
    } catch (err) {
      req.resume();
      throw err;
    }
    const outcome = await files.receive({
      body: (options) => receiveMultipartUpload(req, options),
      scope: async (field) =>
        field !== undefined && queryParam(req, 'workspace_id') === undefined
          ? services.workspaces.resolveScope(callerOf(res), field, queryParam(req, 'organisation_id'))
          : chosen,
      claim: key === undefined ? undefined : (identity) => claimRequest(services.idempotency, req, res, key, identity),
    });
    if (outcome.kind === 'replay') sendReplay(res, outcome);
    else res.status(200).json(toFileJson(outcome.file));
  });

  router.get(
    '/',
    json(async (req, res) => {
      const { scope, query } = await tenantRequest(services.workspaces, req, res, ['purpose', 'limit', 'order', 'after']);
      return toFileListJson(await files.list(scope, query));
    }),
  );

  router.get(
    '/:fileId',
    json(async (req, res) => {
      const { scope } = await tenantRequest(services.workspaces, req, res);
      return toFileJson(await files.get(scope, pathParam(req, 'fileId')));
    }),
  );

  // A gateway file, or else a result file of one of the scope's hosted jobs (streamed from its provider).
  router.get('/:fileId/content', async (req, res) => {
    const { scope } = await tenantRequest(services.workspaces, req, res);
    const id = pathParam(req, 'fileId');
    const stored = await files.download(scope, id).catch((err: unknown) => {
      if (err instanceof GatewayError && err.kind === 'not_found') return null;
      throw err;
    });
    if (stored) {
      res.setHeader('content-type', contentTypeOf(stored.file));
      res.setHeader('content-length', String(stored.file.bytes));
      res.setHeader('content-disposition', contentDisposition(stored.file.filename));
      return send(stored.stream, res);
    }
    const remote = await services.fineTuning.resultFileContent(scope, id);
    res.setHeader('content-type', remote.contentType ?? 'application/octet-stream');
    if (remote.bytes !== null) res.setHeader('content-length', String(remote.bytes));
    res.setHeader('content-disposition', contentDisposition(id));
    return send(remote.stream, res);
  });

  router.delete(
    '/:fileId',
    json(async (req, res) => {
      const { scope } = await tenantRequest(services.workspaces, req, res);
      return toDeletedFileJson(await files.delete(scope, pathParam(req, 'fileId')));
    }),
  );

  return router;
}
