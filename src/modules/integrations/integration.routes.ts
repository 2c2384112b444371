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
      const { scope, body } = await tenantRequest(services.workspaces, req, res);
      return toIntegrationJson(await integrations.create(scope, body));
    }),
  );

  router.get(
    '/',
    json(async (req, res) => {
      const { scope } = await tenantRequest(services.workspaces, req, res);
      return { object: 'list', data: (await integrations.list(scope)).map(toIntegrationJson) };
    }),
  );

  // `:integration` is the id, the slug or `@slug`.
  router.get(
    '/:integration',
    json(async (req, res) => {
      const { scope } = await tenantRequest(services.workspaces, req, res);
      return toIntegrationJson(await integrations.get(scope, pathParam(req, 'integration')));
    }),
  );

  for (const [method, mode] of [
    ['put', 'replace'],
    ['patch', 'merge'],
  ] as const) {
    router[method](
      '/:integration',
      json(async (req, res) => {
        const { scope, body } = await tenantRequest(services.workspaces, req, res);
        return toIntegrationJson(await integrations.update(scope, pathParam(req, 'integration'), body, mode));
      }),
    );
  }

  router.delete(
    '/:integration',
    json(async (req, res) => {
      const { scope } = await tenantRequest(services.workspaces, req, res);
      return toDeletedIntegrationJson(await integrations.delete(scope, pathParam(req, 'integration')));
    }),
  );

  return router;
}
