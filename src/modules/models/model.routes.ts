import { Router } from 'express';
import { json, pathParam, tenantRequest } from '../../http/rest';
import type { Services } from '../../services';
import { toAnyModelJson, toIntegrationModelJson, toModelJson } from './model.mapper';

/** `/v1/models`: the workspace's fine-tuned models, then its integrations' models, in OpenAI's shapes (`openai.models.list()`). */
export function modelRoutes(services: Services): Router {
  const router = Router();
  const { models } = services;

  router.get(
    '/',
    json(async (req, res) => {
      const { scope } = await tenantRequest(services.workspaces, req, res);
      const { served, integrations } = await models.list(scope);
      return { object: 'list', data: [...served.map(toModelJson), ...integrations.map(toIntegrationModelJson)] };
    }),
  );

  // A model id may hold `/` (a Bedrock ARN, a Vertex resource) when the client does not encode it.
  router.get(
    '/*modelId',
    json(async (req, res) => {
      const { scope } = await tenantRequest(services.workspaces, req, res);
      return toAnyModelJson(await models.find(scope, pathParam(req, 'modelId')));
    }),
  );

  return router;
}
