import { Router, type RequestHandler } from 'express';
import { badRequest } from '../../errors';
import { camelizeKeys } from '../../http/case';
import { json, pathParam, queryObject, requestScope, SCOPE_PARAMS, scopeOf } from '../../http/rest';
import type { Services } from '../../services';
import { toCheckpointListJson, toEventListJson, toJobJson, toJobListJson } from './fine-tuning.mapper';

const PAGE_PARAMS = [...SCOPE_PARAMS, 'after', 'limit'] as const;

/**
 * Client mode (api.md §5: the provider named by an `x-gateway-provider` header, the call forwarded
 * to it) is not implemented yet; refusing it is better than silently answering from the hosted jobs.
 * Without that header an `Authorization` header is ignored (OpenAI SDKs always send one).
 */
const refuseClientMode: RequestHandler = (req, _res, next) => {
  if (req.header('x-gateway-provider') !== undefined) {
    throw badRequest(
      'Client mode (the x-gateway-provider header) is not supported for fine-tuning yet: send the request without it, ' +
        'and name a stored integration in the body as gateway_options: {"x-gateway-provider": "@slug"}',
      'x-gateway-provider',
      'client_mode_unsupported',
    );
  }
  next();
};

/** Strips the scope parameters from a query object (they choose the workspace, not the page). */
function pageQuery(query: Record<string, string>): Record<string, unknown> {
  const { workspace_id: _w, organisation_id: _o, ...rest } = query;
  return camelizeKeys(rest, 'query');
}

/** `/v1/fine_tuning/jobs`: hosted (provider-mode) fine-tuning jobs in OpenAI's wire format. */
export function fineTuningRoutes(services: Services): Router {
  const router = Router();
  const { fineTuning } = services;
  router.use(refuseClientMode);

  router.post(
    '/',
    json(async (req, res) => {
      const body = camelizeKeys(req.body);
      const scope = await requestScope(services, req, res, body.workspaceId);
      return toJobJson(await fineTuning.create(scope, body));
    }),
  );

  router.get(
    '/',
    json(async (req, res) => {
      const query = queryObject(req, PAGE_PARAMS);
      const scope = await scopeOf(services, req, res);
      return toJobListJson(await fineTuning.list(scope, pageQuery(query)));
    }),
  );

  router.get(
    '/:jobId',
    json(async (req, res) => {
      const scope = await requestScope(services, req, res);
      return toJobJson(await fineTuning.get(scope, pathParam(req, 'jobId')));
    }),
  );

  router.post(
    '/:jobId/cancel',
    json(async (req, res) => {
      const { workspaceId, ...rest } = camelizeKeys(req.body);
      const unknown = Object.keys(rest)[0];
      if (unknown !== undefined) throw badRequest(`Unknown field '${unknown}'`, unknown);
      const scope = await requestScope(services, req, res, workspaceId);
      return toJobJson(await fineTuning.cancel(scope, pathParam(req, 'jobId')));
    }),
  );

  router.get(
    '/:jobId/events',
    json(async (req, res) => {
      const query = queryObject(req, PAGE_PARAMS);
      const scope = await scopeOf(services, req, res);
      return toEventListJson(await fineTuning.events(scope, pathParam(req, 'jobId'), pageQuery(query)));
    }),
  );

  router.get(
    '/:jobId/checkpoints',
    json(async (req, res) => {
      const query = queryObject(req, PAGE_PARAMS);
      const scope = await scopeOf(services, req, res);
      return toCheckpointListJson(await fineTuning.checkpoints(scope, pathParam(req, 'jobId'), pageQuery(query)));
    }),
  );

  return router;
}
