import { Router } from 'express';
import { json, pathParam, tenantRequest } from '../../http/rest';
import type { Services } from '../../services';
import { toLabelJson } from './label.mapper';

export function labelRoutes(services: Services): Router {
  const router = Router();
  const { labels } = services;

  router.post(
    '/',
    json(async (req, res) => {
      const { scope, body } = await tenantRequest(services.workspaces, req, res);
      const label = await labels.create(scope, body);
      return { id: label.id };
    }),
  );

  router.get(
    '/',
    json(async (req, res) => {
      const { scope, query } = await tenantRequest(services.workspaces, req, res, ['search', 'current_page', 'page_size']);
      const page = await labels.list(scope, query);
      return { total: page.total, data: page.items.map(toLabelJson) };
    }),
  );

  router.get(
    '/:labelId',
    json(async (req, res) => {
      const { scope } = await tenantRequest(services.workspaces, req, res);
      return toLabelJson(await labels.get(scope, pathParam(req, 'labelId')));
    }),
  );

  router.put(
    '/:labelId',
    json(async (req, res) => {
      const { scope, body } = await tenantRequest(services.workspaces, req, res);
      await labels.update(scope, pathParam(req, 'labelId'), body);
      return {};
    }),
  );

  router.delete(
    '/:labelId',
    json(async (req, res) => {
      const { scope } = await tenantRequest(services.workspaces, req, res);
      await labels.delete(scope, pathParam(req, 'labelId'));
      return {};
    }),
  );

  return router;
}
