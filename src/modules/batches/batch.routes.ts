import { Router } from 'express';
import { invalidField } from '../../errors';
import { callerOf, json, pathParam, tenantRequest } from '../../http/rest';
import type { Services } from '../../services';
import { toBatchJson, toBatchListJson } from './batch.mapper';

/** `/v1/batches`: OpenAI's Batch API over the gateway's own runner. */
export function batchRoutes(services: Services): Router {
  const router = Router();
  const { batches } = services;

  router.post(
    '/',
    json(async (req, res) => {
      const { scope, body } = await tenantRequest(services.workspaces, req, res);
      return toBatchJson(await batches.create(scope, body, callerOf(res).keyId));
    }),
  );

  router.get(
    '/',
    json(async (req, res) => {
      const { scope, query } = await tenantRequest(services.workspaces, req, res, ['after', 'limit']);
      return toBatchListJson(await batches.list(scope, query));
    }),
  );

  router.get(
    '/:batchId',
    json(async (req, res) => {
      const { scope } = await tenantRequest(services.workspaces, req, res);
      return toBatchJson(await batches.get(scope, pathParam(req, 'batchId')));
    }),
  );

  router.post(
    '/:batchId/cancel',
    json(async (req, res) => {
      const { scope, body } = await tenantRequest(services.workspaces, req, res);
      const unknown = Object.keys(body)[0];
      if (unknown !== undefined) throw invalidField(unknown, 'is not a known field');
      return toBatchJson(await batches.cancel(scope, pathParam(req, 'batchId')));
    }),
  );

  return router;
}
