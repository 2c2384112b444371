import { Router } from 'express';
import { json, pathParam, tenantRequest } from '../../http/rest';
import type { Services } from '../../services';
import { toPartialJson, toPartialSummaryJson, toPartialVersionJson } from './partial.mapper';

/** REST face of prompt partials, mounted at /v1/prompts/partials. `{idOrSlug}`: a UUID is an id, anything else a slug. */
export function partialRoutes(services: Services): Router {
  const router = Router();
  const { partials } = services;

  router.post(
    '/',
    json(async (req, res) => {
      const { scope, body } = await tenantRequest(services.workspaces, req, res);
      const { partial, version } = await partials.create(scope, body);
      return { id: partial.id, slug: partial.slug, version_id: version.id };
    }),
  );

  router.get(
    '/',
    json(async (req, res) => {
      const { scope, query } = await tenantRequest(services.workspaces, req, res, ['collection_id', 'status']);
      return (await partials.list(scope, query)).map(toPartialSummaryJson);
    }),
  );

  router.get(
    '/:idOrSlug',
    json(async (req, res) => {
      const { scope } = await tenantRequest(services.workspaces, req, res);
      const { partial, version } = await partials.get(scope, pathParam(req, 'idOrSlug'));
      return toPartialJson(partial, version);
    }),
  );

  router.put(
    '/:idOrSlug',
    json(async (req, res) => {
      const { scope, body } = await tenantRequest(services.workspaces, req, res);
      const { version } = await partials.update(scope, pathParam(req, 'idOrSlug'), body);
      return { prompt_partial_version_id: version.id };
    }),
  );

  router.delete(
    '/:idOrSlug',
    json(async (req, res) => {
      const { scope } = await tenantRequest(services.workspaces, req, res);
      await partials.delete(scope, pathParam(req, 'idOrSlug'));
      return {};
    }),
  );

  router.get(
    '/:idOrSlug/versions',
    json(async (req, res) => {
      const { scope } = await tenantRequest(services.workspaces, req, res);
      const { partial, versions } = await partials.versions(scope, pathParam(req, 'idOrSlug'));
      return versions.map((version) => toPartialVersionJson(partial, version));
    }),
  );

  router.put(
    '/:idOrSlug/makeDefault',
    json(async (req, res) => {
      const { scope, body } = await tenantRequest(services.workspaces, req, res);
      await partials.makeDefault(scope, pathParam(req, 'idOrSlug'), body);
      return {};
    }),
  );

  return router;
}
