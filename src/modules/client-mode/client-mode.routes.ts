import { pipeline } from 'node:stream/promises';
import { Router, type Request, type RequestHandler, type Response } from 'express';
import { whenBody } from '../../http/body';
import { GatewayError, invalidField, unsupported } from '../../errors';
import { receiveMultipartUpload } from '../../http/multipart';
import { headersOf, PROVIDER_HEADER } from '../../http/provider-headers';
import { callerOf, json, lazyTenantRequest, pathParam } from '../../http/rest';
import { cursorListJson, type Page } from '../../http/openai-shapes';
import type { ProviderFile, ProviderJob, ProviderPage } from '../../providers/types';
import type { Services } from '../../services';
import { idempotencyKeyOf } from '../idempotency/idempotency.middleware';
import { toClientBatchJson } from './client-batches';
import { toCheckpointJson, toEventListJson, toJobJson, toJobListJson, type JobView } from '../fine-tuning/fine-tuning.mapper';

/** Only requests naming a provider are client mode; the others go on to the hosted routes. */
const onlyClientMode: RequestHandler = (req, _res, next) => next(req.headers[PROVIDER_HEADER] === undefined ? 'router' : undefined);

/** The app's JSON body middlewares (content type, parser, text guard) and its idempotent-create claim, for the routes that take a body. */
export interface BodyMiddleware {
  json: RequestHandler[];
  creates: () => RequestHandler;
}

/**
 * Every client-mode route, in one router mounted ahead of the hosted ones: a request naming no provider
 * leaves it after one header test, and a client-mode call does not walk the hosted routers' layers.
 */
export function clientModeRoutes(services: Services, body: BodyMiddleware): Router {
  const router = Router();
  const json = whenBody(body.json);
  router.use(onlyClientMode);
  // Multipart uploads: no JSON body parser (the route streams the body itself).
  router.use('/files', clientModeFileRoutes(services));
  router.use('/fine_tuning/jobs', json, body.creates(), clientModeJobRoutes(services));
  router.use('/batches', json, body.creates(), clientModeBatchRoutes(services));
  return router;
}

/** OpenAI's file object for a provider's file (client mode answers in OpenAI's shapes). */
export function providerFileJson(file: ProviderFile) {
  return {
    id: file.id,
    object: 'file' as const,
    bytes: file.bytes,
    created_at: file.createdAt,
    filename: file.filename,
    purpose: file.purpose,
    status: file.status,
    status_details: file.statusDetails,
  };
}

const pageOf = <T>(page: ProviderPage<T>): Page<T> => ({ items: page.data, hasMore: page.hasMore });

/**
 * `last_id`: what to send as `after` for the next page (the provider's page token where it pages by
 * token); on the last page, which has no token, the last item's id as OpenAI answers it.
 */
const lastId = <T extends { id: string }>(page: ProviderPage<T>) => page.nextAfter ?? page.data.at(-1)?.id ?? null;

/** OpenAI's list with `first_id`/`last_id`. */
const providerListJson = <T extends { id: string }, J extends { id: string }>(page: ProviderPage<T>, toJson: (item: T) => J) => ({
  ...cursorListJson(pageOf(page), toJson),
  last_id: lastId(page),
});

/**
 * A provider's job with what OpenAI's job object requires and a provider may not say: the owner is
 * the caller's gateway organisation where the provider names no account of its own, the seed 0
 * where the provider takes or reports none (each provider's page in docs/providers says which).
 */
const jobView =
  (res: Response) =>
  (job: ProviderJob): JobView => ({
    ...job,
    organizationId: job.organizationId ?? callerOf(res).organisationId,
    seed: job.seed ?? 0,
  });

/**
 * A client-mode upload reaches the provider while it streams in, before its SHA-256 (its identity)
 * is known, so it cannot be made idempotent: a key is refused rather than silently not honoured.
 */
function refuseIdempotencyKey(req: Request): void {
  if (idempotencyKeyOf(req) === undefined) return;
  throw new GatewayError('unsupported', 'Idempotency-Key is not supported for client-mode uploads (the file goes to the provider as it streams in)', {
    param: 'Idempotency-Key',
    code: 'unsupported_operation',
  });
}

/** `/v1/files` in client mode: the caller's provider, streamed through both ways. */
function clientModeFileRoutes(services: Services): Router {
  const router = Router();
  const { clientMode, clientBatches, files } = services;

  router.post(
    '/',
    json(async (req, res) => {
      const { scope } = await Promise.resolve()
        .then(() => refuseIdempotencyKey(req))
        .then(() => lazyTenantRequest(services.workspaces, req, res))
        .catch((err: unknown) => {
          req.resume();
          throw err;
        });
      let purposeKnown!: (purpose: string) => void;
      let purposeMissing!: (err: unknown) => void;
      const purpose = new Promise<string>((resolve, reject) => ((purposeKnown = resolve), (purposeMissing = reject)));
      purpose.catch(() => undefined);
      const { file } = await receiveMultipartUpload(req, {
        maxFileBytes: files.maxUploadBytes,
        limits: files.multipartLimits,
        allowedFields: ['purpose'],
        onFields: (fields) => (fields.purpose ? purposeKnown(fields.purpose) : purposeMissing(invalidField('purpose', 'is required'))),
        onFile: ({ filename, stream }) => clientMode.uploadFile(scope, headersOf(req), { filename, purpose, stream }),
      });
      return providerFileJson(file);
    }),
  );

  router.get(
    '/',
    json(async (req, res) => {
      const { scope, query } = await lazyTenantRequest(services.workspaces, req, res, ['purpose', 'limit', 'order', 'after']);
      const page = await clientMode.listFiles(scope, headersOf(req), query);
      return providerListJson(page, providerFileJson);
    }),
  );

  // A batch's output and error files are read from the batch (client-batches.ts), the others from the provider's files.
  router.get(
    '/:fileId',
    json(async (req, res) => {
      const { scope } = await lazyTenantRequest(services.workspaces, req, res);
      const id = pathParam(req, 'fileId');
      const file = clientBatches.isResultFile(id) ? clientBatches.file(scope, headersOf(req), id) : clientMode.getFile(scope, headersOf(req), id);
      return providerFileJson(await file);
    }),
  );

  router.get('/:fileId/content', async (req, res) => {
    const { scope } = await lazyTenantRequest(services.workspaces, req, res);
    const id = pathParam(req, 'fileId');
    if (clientBatches.isResultFile(id)) return streamContent(res, await clientBatches.content(scope, headersOf(req), id), JSONL, null);
    const content = await clientMode.fileContent(scope, headersOf(req), id);
    await streamContent(res, content.stream, content.contentType, content.bytes);
  });

  router.delete(
    '/:fileId',
    json(async (req, res) => {
      const { scope } = await lazyTenantRequest(services.workspaces, req, res);
      const id = pathParam(req, 'fileId');
      if (clientBatches.isResultFile(id)) throw unsupported("A batch's results stay with the batch at the provider: delete them there", 'fileId');
      await clientMode.deleteFile(scope, headersOf(req), id);
      return { id, object: 'file', deleted: true };
    }),
  );

  return router;
}

/** Streams content to the client; a failure midway cuts the connection rather than ending a response that looks complete. */
export async function streamContent(res: Response, stream: NodeJS.ReadableStream, contentType: string | null, bytes: number | null): Promise<void> {
  res.status(200);
  res.setHeader('content-type', contentType ?? 'application/octet-stream');
  if (bytes !== null) res.setHeader('content-length', String(bytes));
  try {
    await pipeline(stream, res);
  } catch {
    res.destroy();
  }
}

const PAGE_PARAMS = ['after', 'limit'];
const JSONL = 'application/jsonl';

/** `/v1/fine_tuning/jobs` in client mode. */
function clientModeJobRoutes(services: Services): Router {
  const router = Router();
  const { clientMode } = services;

  router.post(
    '/',
    json(async (req, res) => {
      const { scope, body } = await lazyTenantRequest(services.workspaces, req, res);
      return toJobJson(jobView(res)(await clientMode.createJob(scope, headersOf(req), body)));
    }),
  );

  router.get(
    '/',
    json(async (req, res) => {
      const { scope, query } = await lazyTenantRequest(services.workspaces, req, res, PAGE_PARAMS);
      const page = await clientMode.listJobs(scope, headersOf(req), query);
      return { ...toJobListJson({ items: page.data.map(jobView(res)), hasMore: page.hasMore }), last_id: lastId(page) };
    }),
  );

  router.get(
    '/:jobId',
    json(async (req, res) => {
      const { scope } = await lazyTenantRequest(services.workspaces, req, res);
      return toJobJson(jobView(res)(await clientMode.getJob(scope, headersOf(req), pathParam(req, 'jobId'))));
    }),
  );

  router.post(
    '/:jobId/cancel',
    json(async (req, res) => {
      const { scope } = await lazyTenantRequest(services.workspaces, req, res);
      return toJobJson(jobView(res)(await clientMode.cancelJob(scope, headersOf(req), pathParam(req, 'jobId'))));
    }),
  );

  router.get(
    '/:jobId/events',
    json(async (req, res) => {
      const { scope, query } = await lazyTenantRequest(services.workspaces, req, res, PAGE_PARAMS);
      const page = await clientMode.listEvents(scope, headersOf(req), pathParam(req, 'jobId'), query);
      return { ...toEventListJson(pageOf(page)), last_id: lastId(page) };
    }),
  );

  router.get(
    '/:jobId/checkpoints',
    json(async (req, res) => {
      const { scope, query } = await lazyTenantRequest(services.workspaces, req, res, PAGE_PARAMS);
      return providerListJson(await clientMode.listCheckpoints(scope, headersOf(req), pathParam(req, 'jobId'), query), toCheckpointJson);
    }),
  );

  return router;
}

/** `/v1/batches` in client mode: the provider's own batch service, nothing stored (client-batches.ts). */
function clientModeBatchRoutes(services: Services): Router {
  const router = Router();
  const { clientBatches } = services;

  router.post(
    '/',
    json(async (req, res) => {
      const { scope, body } = await lazyTenantRequest(services.workspaces, req, res);
      return toClientBatchJson(await clientBatches.create(scope, headersOf(req), body));
    }),
  );

  router.get(
    '/',
    json(async (req, res) => {
      const { scope, query } = await lazyTenantRequest(services.workspaces, req, res, PAGE_PARAMS);
      const page = await clientBatches.list(scope, headersOf(req), query);
      // `last_id`: the list's own cursor (client-batches.ts makes it the last batch's id where it is its handle).
      return { ...cursorListJson(pageOf(page), toClientBatchJson), last_id: page.nextAfter };
    }),
  );

  router.get(
    '/:batchId',
    json(async (req, res) => {
      const { scope } = await lazyTenantRequest(services.workspaces, req, res);
      return toClientBatchJson(await clientBatches.get(scope, headersOf(req), pathParam(req, 'batchId')));
    }),
  );

  router.post(
    '/:batchId/cancel',
    json(async (req, res) => {
      const { scope, body } = await lazyTenantRequest(services.workspaces, req, res);
      const unknown = Object.keys(body)[0];
      if (unknown !== undefined) throw invalidField(unknown, 'is not a known field');
      return toClientBatchJson(await clientBatches.cancel(scope, headersOf(req), pathParam(req, 'batchId')));
    }),
  );

  return router;
}
