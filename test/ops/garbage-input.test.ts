/**
 * Every REST route, fed malformed input: each answer is a 4xx in the documented error shape, never a
 * 500 and never a stack trace.
 */
import { api, startTestGateway, type TestGateway } from '../support/gateway';

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(() => gw.stop());

const ID = '3f9a1c52-8d0e-4b7a-9c61-2a5e8f7d4b10';
const ROUTES: Array<[string, string]> = [
  ['POST', '/v1/labels'],
  ['GET', '/v1/labels'],
  ['GET', `/v1/labels/${ID}`],
  ['PUT', `/v1/labels/${ID}`],
  ['DELETE', `/v1/labels/${ID}`],
  ['POST', '/v1/prompts/partials'],
  ['GET', '/v1/prompts/partials'],
  ['GET', '/v1/prompts/partials/some-slug'],
  ['PUT', '/v1/prompts/partials/some-slug'],
  ['DELETE', '/v1/prompts/partials/some-slug'],
  ['GET', '/v1/prompts/partials/some-slug/versions'],
  ['PUT', '/v1/prompts/partials/some-slug/makeDefault'],
  ['POST', '/v1/integrations'],
  ['GET', '/v1/integrations'],
  ['GET', '/v1/integrations/nope'],
  ['DELETE', '/v1/integrations/nope'],
  ['POST', '/v1/files'],
  ['GET', '/v1/files'],
  ['GET', `/v1/files/${ID}`],
  ['GET', `/v1/files/${ID}/content`],
  ['DELETE', `/v1/files/${ID}`],
  ['POST', '/v1/fine_tuning/jobs'],
  ['GET', '/v1/fine_tuning/jobs'],
  ['GET', `/v1/fine_tuning/jobs/${ID}`],
  ['POST', `/v1/fine_tuning/jobs/${ID}/cancel`],
  ['GET', `/v1/fine_tuning/jobs/${ID}/events`],
  ['GET', `/v1/fine_tuning/jobs/${ID}/checkpoints`],
  ['POST', '/v1/admin/workspaces'],
  ['POST', '/v1/api-keys'],
  ['DELETE', '/v1/api-keys/not-an-id'],
];

const JSON_BODIES = ['{', '[]', 'null', '"text"', '42', '{"name": null, "string": [], "slug": {}}', JSON.stringify({ x: 'y'.repeat(5000) })];
const QUERIES = ['?limit=abc', '?limit=0', '?page_size=-1&current_page=x', '?workspace_id=', '?after=%00', '?workspace_id=a&workspace_id=b', '?organisation_id=not-a-uuid'];

function expectClientError(res: { status: number; body: any }, what: string) {
  if (res.status < 400 || res.status >= 500) throw new Error(`${what}: status ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
  expect(Object.keys(res.body.error)).toEqual(['message', 'type', 'param', 'code']);
  expect(JSON.stringify(res.body)).not.toMatch(/\n\s+at |node_modules/);
}

describe('malformed input on every REST route', () => {
  it.each(ROUTES)('%s %s answers bodies it cannot use with a 4xx', async (method, path) => {
    if (method === 'GET' || method === 'DELETE') return;
    for (const rawBody of JSON_BODIES) {
      const res = await api(gw, method, path, { rawBody, headers: { 'content-type': 'application/json' } });
      expectClientError(res, `${method} ${path} ${rawBody.slice(0, 40)}`);
    }
    const wrongType = await api(gw, method, path, { rawBody: 'a=b', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expectClientError(wrongType, `${method} ${path} form body`);
  });

  it.each(ROUTES)('%s %s answers malformed query strings with a 4xx or ignores them, never 500', async (method, path) => {
    for (const query of QUERIES) {
      const res = await api(gw, method, path + query, method === 'GET' || method === 'DELETE' ? {} : { body: {} });
      if (res.status >= 500) throw new Error(`${method} ${path}${query}: status ${res.status} ${JSON.stringify(res.body)}`);
      if (res.status >= 400) expectClientError(res, `${method} ${path}${query}`);
    }
  });
});
