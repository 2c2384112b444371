import { Router } from 'express';
import { camelizeKeys } from '../../http/case';
import { json, pathParam, queryObject, requestScope, SCOPE_PARAMS, scopeOf } from '../../http/rest';
import type { Services } from '../../services';
import { toLabelJson } from './label.mapper';

export function labelRoutes(services: Services): Router {
  const router = Router();
  const { labels } = services;

  router.post(
    '/',
    json(async (req, res) => {
      const body = camelizeKeys(req.body);
      const scope = await scopeOf(services, req, res, body.workspaceId);
      const label = await labels.create(scope, body);
      return { id: label.id };
    }),
  );

  router.get(
    '/',
    json(async (req, res) => {
      const { workspace_id: _w, organisation_id: _o, ...filter } = queryObject(req, [...SCOPE_PARAMS, 'search', 'current_page', 'page_size']);
      const scope = await scopeOf(services, req, res);
      const page = await labels.list(scope, camelizeKeys(filter, 'query'));
      return { total: page.total, data: page.items.map(toLabelJson) };
    }),
  );

  router.get(
    '/:labelId',
    json(async (req, res) => {
      const scope = await requestScope(services, req, res);
      return toLabelJson(await labels.get(scope, pathParam(req, 'labelId')));
    }),
  );

  router.put(
    '/:labelId',
    json(async (req, res) => {
      const scope = await requestScope(services, req, res);
      await labels.update(scope, pathParam(req, 'labelId'), camelizeKeys(req.body));
      return {};
    }),
  );

  router.delete(
    '/:labelId',
    json(async (req, res) => {
      const scope = await requestScope(services, req, res);
      await labels.delete(scope, pathParam(req, 'labelId'));
      return {};
    }),
  );

  return router;
}
