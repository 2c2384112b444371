import { pipeline } from 'node:stream/promises';
import { Router, type Request, type Response } from 'express';
import { GatewayError } from '../../errors';
import { receiveMultipartUpload } from '../../http/multipart';
import { callerOf, json, pathParam, queryParam, tenantRequest } from '../../http/rest';
import type { Services } from '../../services';
import { toDeletedFileJson, toFileJson, toFileListJson } from './file.mapper';
import type { GatewayFile } from './file.repository';
import type { StagedFile } from './file.service';
import { claimFor, idempotencyKeyOf, requestIdentity, sendReplay, settleWithAnswer } from '../idempotency/idempotency.middleware';
import { fingerprintOf, type IdempotentReplay } from '../idempotency/idempotency.service';

/** Datasets are JSON Lines; anything else is opaque bytes. */
function contentTypeOf(file: GatewayFile): string {
  return file.purpose === 'fine-tune' || file.filename.toLowerCase().endsWith('.jsonl') ? 'application/jsonl' : 'application/octet-stream';
}

/** RFC 6266 / 5987: an ASCII fallback plus the exact UTF-8 name. */
function contentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}

/**
 * An upload's Idempotency-Key, claimed once the file has streamed in: its identity is the file's
 * SHA-256 and purpose (and where it goes). Returns the first answer to replay, or null when this
 * request now holds the key (its answer settles it).
 */
async function claimUpload(
  services: Services,
  req: Request,
  res: Response,
  key: string,
  staged: StagedFile,
  fields: Record<string, string>,
): Promise<IdempotentReplay | null> {
  const fingerprint = fingerprintOf([...requestIdentity(req), staged.sha256, fields.purpose ?? '', fields.workspace_id ?? '']);
  const outcome = await claimFor(res, services.idempotency, key, fingerprint);
  if (outcome.kind === 'replay') return outcome;
  settleWithAnswer(res, outcome, services.idempotency);
  return null;
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
    let scope;
    let idempotencyKey;
    try {
      // Checked before the upload streams in, from the query (or the key's own workspace);
      // a `workspace_id` form field, known only at the end, may still name another.
      ({ scope } = await tenantRequest(services, req, res));
      idempotencyKey = idempotencyKeyOf(req);
    } catch (err) {
      req.resume();
      throw err;
    }
    const { fields, file: staged } = await receiveMultipartUpload(req, {
      maxFileBytes: files.maxUploadBytes,
      limits: files.multipartLimits,
      allowedFields: ['purpose', 'workspace_id'],
      onFile: ({ filename, stream }) => files.stage({ filename, stream }),
      onDiscard: (staged) => files.discard(staged),
    });
    try {
      if (fields.workspace_id !== undefined && queryParam(req, 'workspace_id') === undefined) {
        scope = await services.workspaces.resolveScope(callerOf(res), fields.workspace_id, queryParam(req, 'organisation_id'));
      }
      const replay = idempotencyKey === undefined ? null : await claimUpload(services, req, res, idempotencyKey, staged, fields);
      if (replay) {
        // This copy's bytes go before the answer does: once answered, nothing of it is left.
        await files.discard(staged);
        sendReplay(res, replay);
        return;
      }
    } catch (err) {
      await files.discard(staged);
      throw err;
    }
    res.status(200).json(toFileJson(await files.commit(scope, staged, fields.purpose)));
  });

  router.get(
    '/',
    json(async (req, res) => {
      const { scope, query } = await tenantRequest(services, req, res, ['purpose', 'limit', 'order', 'after']);
      return toFileListJson(await files.list(scope, query));
    }),
  );

  router.get(
    '/:fileId',
    json(async (req, res) => {
      const { scope } = await tenantRequest(services, req, res);
      return toFileJson(await files.get(scope, pathParam(req, 'fileId')));
    }),
  );

  // A gateway file, or else a result file of one of the scope's hosted jobs (streamed from its provider).
  router.get('/:fileId/content', async (req, res) => {
    const { scope } = await tenantRequest(services, req, res);
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
      const { scope } = await tenantRequest(services, req, res);
      return toDeletedFileJson(await files.delete(scope, pathParam(req, 'fileId')));
    }),
  );

  return router;
}
