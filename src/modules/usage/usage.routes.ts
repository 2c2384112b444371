import { Router, type Request } from 'express';
import { GatewayError } from '../../errors';
import { callerOf, json } from '../../http/rest';
import { fromRest } from '../../http/case';
import type { Services } from '../../services';
import { toCostPageJson, toLogPageJson, toUsagePageJson } from './usage.mapper';

/**
 * The query string as raw service input: `names` are single values, `lists` arrays (OpenAI's SDKs
 * send `group_by[]=a&group_by[]=b`; `group_by=a,b` and a repeated `group_by` work too). Any other
 * parameter is a 400 naming it.
 */
function queryInput(req: Request, names: readonly string[], lists: readonly string[] = []) {
  const out: Record<string, unknown> = {};
  for (const [raw, value] of Object.entries(req.query)) {
    const name = raw.endsWith('[]') ? raw.slice(0, -2) : raw;
    const values = (Array.isArray(value) ? value : [value]).map(String);
    if (lists.includes(name)) out[name] = [...((out[name] as string[] | undefined) ?? []), ...values.flatMap((v) => v.split(',')).filter(Boolean)];
    else if (names.includes(raw) && values.length === 1) out[raw] = values[0];
    else
      throw new GatewayError('invalid_request', names.includes(raw) ? 'must be given once' : 'is not a known query parameter', {
        param: raw,
        aboutField: true,
        code: 'invalid_request',
      });
  }
  return fromRest(out, 'query');
}

const BUCKET_PARAMS = ['start_time', 'end_time', 'bucket_width', 'limit', 'page'];

/** `/v1/organization/usage/completions` and `/v1/organization/costs` (OpenAI's Usage and Costs APIs). */
export function usageRoutes(services: Services): Router {
  const router = Router();
  const { usage } = services;
  router.get(
    '/usage/completions',
    json(async (req, res) => {
      const input = queryInput(req, [...BUCKET_PARAMS, 'batch'], ['group_by', 'project_ids', 'api_key_ids', 'models']);
      return toUsagePageJson(await usage.service.completions(callerOf(res), input));
    }),
  );
  router.get(
    '/costs',
    json(async (req, res) => {
      const input = queryInput(req, BUCKET_PARAMS, ['group_by', 'project_ids', 'api_key_ids']);
      return toCostPageJson(await usage.service.costs(callerOf(res), input));
    }),
  );
  return router;
}

/** `/v1/logs`: the request log, newest first, cursor-paged by `after`. */
export function logRoutes(services: Services): Router {
  const router = Router();
  router.get(
    '/',
    json(async (req, res) => {
      const input = queryInput(req, ['model', 'status', 'api_key_id', 'start_time', 'end_time', 'after', 'limit']);
      return toLogPageJson(await services.usage.service.log(callerOf(res), input));
    }),
  );
  return router;
}
