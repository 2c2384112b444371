import { Router } from 'express';
import { invalidField } from '../../errors';
import { json, pathParam, tenantRequest } from '../../http/rest';
import type { Services } from '../../services';
import { storedCheckpointView, storedEventView, toCheckpointListJson, toEventListJson, toHostedJobJson, toHostedJobListJson } from './fine-tuning.mapper';

const PAGE_PARAMS = ['after', 'limit'];

/** `/v1/fine_tuning/jobs`: hosted (provider-mode) fine-tuning jobs in OpenAI's wire format. */
export function fineTuningRoutes(services: Services): Router {
  const router = Router();
  const { fineTuning } = services;

  router.post(
    '/',
    json(async (req, res) => {
      const { scope, body } = await tenantRequest(services.workspaces, req, res);
      return toHostedJobJson(await fineTuning.create(scope, body));
    }),
  );

  router.get(
    '/',
    json(async (req, res) => {
      const { scope, query } = await tenantRequest(services.workspaces, req, res, PAGE_PARAMS);
      return toHostedJobListJson(await fineTuning.list(scope, query));
    }),
  );

  router.get(
    '/:jobId',
    json(async (req, res) => {
      const { scope } = await tenantRequest(services.workspaces, req, res);
      return toHostedJobJson(await fineTuning.get(scope, pathParam(req, 'jobId')));
    }),
  );

  router.post(
    '/:jobId/cancel',
    json(async (req, res) => {
      const { scope, body } = await tenantRequest(services.workspaces, req, res);
      const unknown = Object.keys(body)[0];
      if (unknown !== undefined) throw invalidField(unknown, 'is not a known field');
      return toHostedJobJson(await fineTuning.cancel(scope, pathParam(req, 'jobId')));
    }),
  );

  router.get(
    '/:jobId/events',
    json(async (req, res) => {
      const { scope, query } = await tenantRequest(services.workspaces, req, res, PAGE_PARAMS);
      const page = await fineTuning.events(scope, pathParam(req, 'jobId'), query);
      return toEventListJson({ items: page.items.map(storedEventView), hasMore: page.hasMore });
    }),
  );

  router.get(
    '/:jobId/checkpoints',
    json(async (req, res) => {
      const { scope, query } = await tenantRequest(services.workspaces, req, res, PAGE_PARAMS);
      const page = await fineTuning.checkpoints(scope, pathParam(req, 'jobId'), query);
      return toCheckpointListJson({ items: page.items.map(storedCheckpointView), hasMore: page.hasMore });
    }),
  );

  return router;
}
