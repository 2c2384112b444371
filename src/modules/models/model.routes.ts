import { Router } from 'express';
import { json, pathParam, tenantRequest } from '../../http/rest';
import type { Services } from '../../services';
import { toModelJson } from './model.mapper';

/** `/v1/models`: the workspace's fine-tuned models in OpenAI's shapes (`openai.models.list()`). */
export function modelRoutes(services: Services): Router {
  const router = Router();
  const { models } = services;

  router.get(
    '/',
    json(async (req, res) => {
      const { scope } = await tenantRequest(services.workspaces, req, res);
      return { object: 'list', data: (await models.list(scope)).map(toModelJson) };
    }),
  );

  // A model id may hold `/` (a Bedrock ARN, a Vertex resource) when the client does not encode it.
  router.get(
    '/*modelId',
    json(async (req, res) => {
      const { scope } = await tenantRequest(services.workspaces, req, res);
      return toModelJson(await models.get(scope, pathParam(req, 'modelId')));
    }),
  );

  return router;
}
