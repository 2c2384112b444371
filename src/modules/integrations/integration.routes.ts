import { Router } from 'express';
import { json, pathParam, tenantRequest } from '../../http/rest';
import type { Services } from '../../services';
import { toDeletedIntegrationJson, toIntegrationJson } from './integration.mapper';

export function integrationRoutes(services: Services): Router {
  const router = Router();
  const { integrations } = services;

  router.post(
    '/',
    json(async (req, res) => {
      const { scope, body } = await tenantRequest(services, req, res);
      return toIntegrationJson(await integrations.create(scope, body));
    }),
  );

  router.get(
    '/',
    json(async (req, res) => {
      const { scope } = await tenantRequest(services, req, res);
      return { object: 'list', data: (await integrations.list(scope)).map(toIntegrationJson) };
    }),
  );

  router.get(
    '/:slug',
    json(async (req, res) => {
      const { scope } = await tenantRequest(services, req, res);
      return toIntegrationJson(await integrations.get(scope, pathParam(req, 'slug')));
    }),
  );

  router.delete(
    '/:slug',
    json(async (req, res) => {
      const { scope } = await tenantRequest(services, req, res);
      return toDeletedIntegrationJson(await integrations.delete(scope, pathParam(req, 'slug')));
    }),
  );

  return router;
}
