import { Router } from 'express';
import { fromRest } from '../../http/case';
import { callerOf, json, pathParam, requireOrganisationKey } from '../../http/rest';
import type { Services } from '../../services';
import { toApiKeyJson } from '../api-keys/api-key.mapper';
import { toWorkspaceJson } from '../workspaces/workspace.mapper';

/** Organisation-key administration: workspaces and API keys of the caller's organisation. */
export function adminRoutes(services: Services): Router {
  const router = Router();
  router.use(['/admin', '/api-keys'], requireOrganisationKey);

  router.post(
    '/admin/workspaces',
    json(async (req, res) => toWorkspaceJson(await services.workspaces.create(callerOf(res).organisationId, fromRest(req.body)))),
  );
  router.get(
    '/admin/workspaces',
    json(async (_req, res) => ({ object: 'list', data: (await services.workspaces.list(callerOf(res).organisationId)).map(toWorkspaceJson) })),
  );

  router.post(
    '/api-keys',
    json(async (req, res) => {
      const issued = await services.apiKeys.create(callerOf(res).organisationId, fromRest(req.body));
      return { ...toApiKeyJson(issued.record), key: issued.key };
    }),
  );
  router.get(
    '/api-keys',
    json(async (_req, res) => ({ object: 'list', data: (await services.apiKeys.list(callerOf(res).organisationId)).map(toApiKeyJson) })),
  );
  router.delete(
    '/api-keys/:keyId',
    json(async (req, res) => {
      await services.apiKeys.revoke(callerOf(res).organisationId, pathParam(req, 'keyId'));
      return {};
    }),
  );
  return router;
}
