/**
 * Every REST route, fed malformed input: each case is a real request whose answer is the expected
 * 4xx in the documented error shape, naming what was wrong, never a 500 and never a stack trace.
 *
 * Cases come from what each route reads: JSON bodies for routes that take one, query strings for
 * routes that check theirs. A GET carries no body (fetch cannot even send one), so GET routes get
 * query cases only.
 */
import { api, useTestGateway } from '../support/gateway';

const gw = useTestGateway();

const ID = '3f9a1c52-8d0e-4b7a-9c61-2a5e8f7d4b10';
const PATH_VALUES = new RegExp(`${ID}|some-slug|nope|some-model|not-an-id`);

interface Route {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  /**
   * The body: `json` is parsed and validated, `parsed` goes through the JSON parser but the route
   * reads nothing from it, `multipart` is an upload; none when no parser looks at it.
   */
  body?: 'json' | 'parsed' | 'multipart';
  /** For `json` bodies: an object of the wrong shape and the field the answer names. */
  wrongShape?: [body: unknown, param: string];
  /** `strict`: refuses unknown query parameters; `scope`: reads only workspace_id and organisation_id. */
  query?: 'strict' | 'scope';
  /** Bad values of the route's own query parameters, with the parameter the answer names. */
  badQueries?: Array<[query: string, param: string]>;
  /** The path parameter (its value in `path` is one of PATH_VALUES), as the answer names it. */
  pathParam?: string;
}

const ROUTES: Route[] = [
  { method: 'POST', path: '/v1/labels', body: 'json', wrongShape: [{ name: null }, 'name'], query: 'scope' },
  {
    method: 'GET',
    path: '/v1/labels',
    query: 'strict',
    badQueries: [
      ['current_page=x', 'current_page'],
      ['page_size=-1', 'page_size'],
      ['page_size=101', 'page_size'],
      ['search=a%00b', 'search'],
    ],
  },
  { method: 'GET', path: `/v1/labels/${ID}`, query: 'strict', pathParam: 'label_id' },
  { method: 'PUT', path: `/v1/labels/${ID}`, body: 'json', wrongShape: [{ color_code: 7 }, 'color_code'], query: 'strict', pathParam: 'label_id' },
  { method: 'DELETE', path: `/v1/labels/${ID}`, body: 'parsed', query: 'strict', pathParam: 'label_id' },
  { method: 'POST', path: '/v1/prompts/partials', body: 'json', wrongShape: [{ name: 'n', string: ['not text'] }, 'string'], query: 'strict' },
  { method: 'GET', path: '/v1/prompts/partials', query: 'strict' },
  { method: 'GET', path: '/v1/prompts/partials/some-slug', query: 'strict', pathParam: 'id_or_slug' },
  { method: 'PUT', path: '/v1/prompts/partials/some-slug', body: 'json', wrongShape: [{ name: null }, 'name'], query: 'strict', pathParam: 'id_or_slug' },
  { method: 'DELETE', path: '/v1/prompts/partials/some-slug', body: 'parsed', query: 'strict', pathParam: 'id_or_slug' },
  { method: 'GET', path: '/v1/prompts/partials/some-slug/versions', query: 'strict', pathParam: 'id_or_slug' },
  {
    method: 'PUT',
    path: '/v1/prompts/partials/some-slug/makeDefault',
    body: 'json',
    wrongShape: [{ version: 'two' }, 'version'],
    query: 'strict',
    pathParam: 'id_or_slug',
  },
  { method: 'POST', path: '/v1/integrations', body: 'json', wrongShape: [{ slug: {} }, 'slug'], query: 'strict' },
  { method: 'GET', path: '/v1/integrations', query: 'strict' },
  { method: 'GET', path: '/v1/integrations/nope', query: 'strict', pathParam: 'integration' },
  { method: 'DELETE', path: '/v1/integrations/nope', body: 'parsed', query: 'strict', pathParam: 'integration' },
  { method: 'PUT', path: '/v1/integrations/nope', body: 'json', wrongShape: [{ name: 7 }, 'name'], query: 'strict', pathParam: 'integration' },
  { method: 'PATCH', path: '/v1/integrations/nope', body: 'json', wrongShape: [{ name: ['x'] }, 'name'], query: 'strict', pathParam: 'integration' },
  { method: 'POST', path: '/v1/files', body: 'multipart', query: 'strict' },
  {
    method: 'GET',
    path: '/v1/files',
    query: 'strict',
    badQueries: [
      ['limit=abc', 'limit'],
      ['limit=0', 'limit'],
      ['order=up', 'order'],
      ['purpose=nonsense', 'purpose'],
      ['after=%00', 'after'],
    ],
  },
  { method: 'GET', path: `/v1/files/${ID}`, query: 'strict', pathParam: 'file_id' },
  { method: 'GET', path: `/v1/files/${ID}/content`, query: 'strict', pathParam: 'file_id' },
  { method: 'DELETE', path: `/v1/files/${ID}`, query: 'strict', pathParam: 'file_id' },
  { method: 'POST', path: '/v1/fine_tuning/jobs', body: 'json', wrongShape: [{}, 'model'], query: 'strict' },
  {
    method: 'GET',
    path: '/v1/fine_tuning/jobs',
    query: 'strict',
    badQueries: [
      ['limit=abc', 'limit'],
      ['limit=0', 'limit'],
      ['after=%00', 'after'],
    ],
  },
  { method: 'GET', path: `/v1/fine_tuning/jobs/${ID}`, query: 'strict', pathParam: 'job_id' },
  {
    method: 'POST',
    path: `/v1/fine_tuning/jobs/${ID}/cancel`,
    body: 'json',
    wrongShape: [{ reason: 'x' }, 'reason'],
    query: 'strict',
    pathParam: 'job_id',
  },
  {
    method: 'GET',
    path: `/v1/fine_tuning/jobs/${ID}/events`,
    query: 'strict',
    pathParam: 'job_id',
    badQueries: [
      ['limit=abc', 'limit'],
      ['limit=101', 'limit'],
    ],
  },
  { method: 'GET', path: `/v1/fine_tuning/jobs/${ID}/checkpoints`, query: 'strict', badQueries: [['limit=0', 'limit']], pathParam: 'job_id' },
  { method: 'POST', path: '/v1/chat/completions', body: 'json', wrongShape: [{ model: 'm', messages: 'hi' }, 'messages'], query: 'strict' },
  { method: 'POST', path: '/v1/batches', body: 'json', wrongShape: [{ input_file_id: 7 }, 'input_file_id'], query: 'strict' },
  { method: 'GET', path: '/v1/batches', query: 'strict', badQueries: [['limit=0', 'limit']] },
  { method: 'GET', path: `/v1/batches/${ID}`, query: 'strict', pathParam: 'batch_id' },
  { method: 'POST', path: `/v1/batches/${ID}/cancel`, body: 'json', wrongShape: [{ reason: 'x' }, 'reason'], query: 'strict', pathParam: 'batch_id' },
  { method: 'GET', path: '/v1/organization/usage/completions', query: 'strict', badQueries: [['start_time=x', 'start_time']] },
  { method: 'GET', path: '/v1/organization/costs', query: 'strict', badQueries: [['start_time=x', 'start_time']] },
  { method: 'GET', path: '/v1/logs', query: 'strict', badQueries: [['limit=0', 'limit']] },
  { method: 'GET', path: '/v1/models', query: 'strict' },
  { method: 'GET', path: '/v1/models/some-model', query: 'strict', pathParam: 'model_id' },
  // Administration routes read no query string.
  { method: 'POST', path: '/v1/admin/workspaces', body: 'json', wrongShape: [{ name: null }, 'name'] },
  { method: 'POST', path: '/v1/api-keys', body: 'json', wrongShape: [{ name: 7 }, 'name'] },
  { method: 'DELETE', path: '/v1/api-keys/not-an-id', body: 'parsed', pathParam: 'key_id' },
];

interface Case {
  name: string;
  route: Route;
  /** Instead of the route's path. */
  path?: string;
  query: string;
  body?: string;
  contentType?: string;
  expected: { status: number; param?: string | null; code?: string | null };
}

const JSON_TYPE = 'application/json';
const OVER_JSON_LIMIT = JSON.stringify({ name: 'x'.repeat(1024 * 1024) });
const NESTED_TOO_DEEP = '{"name":' + '{"a":'.repeat(5000) + '1' + '}'.repeat(5001);

/** What any parsed JSON body route answers, whether or not it reads the body. */
function parserCases(route: Route): Array<Omit<Case, 'route' | 'query'>> {
  return [
    { name: 'unparseable JSON', body: '{', contentType: JSON_TYPE, expected: { status: 400, param: null, code: 'invalid_json' } },
    { name: 'JSON null (not an object or array)', body: 'null', contentType: JSON_TYPE, expected: { status: 400, code: 'invalid_json' } },
    { name: 'a JSON string', body: '"text"', contentType: JSON_TYPE, expected: { status: 400, code: 'invalid_json' } },
    { name: 'a JSON number', body: '42', contentType: JSON_TYPE, expected: { status: 400, code: 'invalid_json' } },
    { name: 'a body over the JSON limit', body: OVER_JSON_LIMIT, contentType: JSON_TYPE, expected: { status: 413, code: 'body_too_large' } },
    { name: 'JSON nested thousands deep', body: NESTED_TOO_DEEP, contentType: JSON_TYPE, expected: { status: 400, param: null, code: 'json_too_deep' } },
    { name: 'a form-encoded body', body: 'a=b', contentType: 'application/x-www-form-urlencoded', expected: { status: 415, code: 'unsupported_media_type' } },
    ...(route.body === 'json'
      ? [
          { name: 'a JSON array', body: '[]', contentType: JSON_TYPE, expected: { status: 400, param: null } },
          {
            name: 'an object of the wrong shape',
            body: JSON.stringify(route.wrongShape![0]),
            contentType: JSON_TYPE,
            expected: { status: 400, param: route.wrongShape![1] },
          },
        ]
      : []),
  ];
}

/**
 * Text Postgres cannot store: NUL (U+0000) and UTF-16 surrogates without their other half. JSON
 * carries both as escapes (`\u0000`, `\ud800`); a URL only NUL (`%00`; invalid UTF-8 decodes to U+FFFD).
 */
const UNSTORABLE_JSON = [
  ['NUL', 'a\\u0000b'],
  ['a lone high surrogate', '\\ud800'],
  ['a lone low surrogate', 'x\\udc00'],
  ['a reversed surrogate pair', '\\udc00\\ud800'],
] as const;

const INVALID_TEXT = { status: 400, code: 'invalid_text' } as const;

/** Unstorable text in a body field (the route's own, or any: the edge refuses it before a route reads it), a nested field and a key. */
function textBodyCases(route: Route): Array<Omit<Case, 'route' | 'query'>> {
  if (route.body !== 'json' && route.body !== 'parsed') return [];
  const field = route.wrongShape?.[1] ?? 'note';
  return [
    ...UNSTORABLE_JSON.map(([what, text]) => ({
      name: `${what} in ${field}`,
      body: `{"${field}": "${text}"}`,
      contentType: JSON_TYPE,
      expected: { ...INVALID_TEXT, param: field },
    })),
    {
      name: 'NUL in a nested field',
      body: '{"metadata": {"k": ["ok", "\\u0000"]}}',
      contentType: JSON_TYPE,
      expected: { ...INVALID_TEXT, param: 'metadata.k.1' },
    },
    { name: 'NUL in a key', body: '{"a\\u0000": 1}', contentType: JSON_TYPE, expected: { ...INVALID_TEXT, param: 'a\uFFFD' } },
  ];
}

function pathCases(route: Route): Array<Omit<Case, 'route'>> {
  if (!route.pathParam) return [];
  const body = route.body === 'json' || route.body === 'parsed' ? { body: '{}', contentType: JSON_TYPE } : {};
  return [
    { name: 'NUL in the path', path: route.path.replace(PATH_VALUES, 'a%00b'), query: '', ...body, expected: { ...INVALID_TEXT, param: route.pathParam } },
    // Percent-encoded bytes that are no UTF-8 (a lone surrogate's): the router cannot decode the path.
    { name: 'undecodable bytes in the path', path: route.path.replace(PATH_VALUES, '%ED%A0%80'), query: '', ...body, expected: { status: 400 } },
  ];
}

function multipartCases(): Array<Omit<Case, 'route' | 'query'>> {
  const boundary = 'garbage-boundary';
  const part = (name: string, value: string) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
  return [
    {
      name: 'NUL in a text field',
      body: `${part('purpose', 'fine\u0000tune')}--${boundary}--\r\n`,
      contentType: `multipart/form-data; boundary=${boundary}`,
      expected: { ...INVALID_TEXT, param: 'purpose' },
    },
    { name: 'a JSON body', body: '{"purpose": "batch"}', contentType: JSON_TYPE, expected: { status: 415 } },
    { name: 'unparseable JSON', body: '{', contentType: JSON_TYPE, expected: { status: 415 } },
    { name: 'a form-encoded body', body: 'purpose=batch', contentType: 'application/x-www-form-urlencoded', expected: { status: 415 } },
  ];
}

function queryCases(route: Route): Array<Omit<Case, 'route'>> {
  if (!route.query) return [];
  const cases: Array<[string, string]> = [
    ['workspace_id=a&workspace_id=b', 'workspace_id'],
    ['organisation_id=not-a-uuid', 'organisation_id'],
    ...(route.query === 'strict' ? ([['bogus=1', 'bogus']] as Array<[string, string]>) : []),
    ...(route.badQueries ?? []),
  ];
  const text: Array<Omit<Case, 'route'>> = [
    { name: 'query with NUL in workspace_id', query: '?workspace_id=a%00b', expected: { ...INVALID_TEXT, param: 'workspace_id' } },
  ];
  // A route with a body gets a harmless one, so only the query is wrong.
  const body = route.body === 'json' || route.body === 'parsed' ? { body: '{}', contentType: JSON_TYPE } : {};
  return [...cases.map(([query, param]) => ({ name: `query ?${query}`, query: `?${query}`, expected: { status: 400, param } })), ...text].map((c) => ({
    ...c,
    ...body,
  }));
}

function casesOf(route: Route): Case[] {
  const bodyCases = route.body === 'multipart' ? multipartCases() : route.body ? [...parserCases(route), ...textBodyCases(route)] : [];
  return [...bodyCases.map((c) => ({ ...c, query: '' })), ...queryCases(route), ...pathCases(route)].map((c) => ({ ...c, route }));
}

const CASES = ROUTES.flatMap(casesOf);

describe('malformed input on every REST route', () => {
  it('has cases for every route', () => {
    for (const route of ROUTES) expect(CASES.filter((c) => c.route === route).length).toBeGreaterThanOrEqual(2);
  });

  it.each(CASES.map((c) => [`${c.route.method} ${c.route.path}: ${c.name}`, c] as const))('%s', async (_name, c) => {
    const res = await api(gw, c.route.method, (c.path ?? c.route.path) + c.query, {
      rawBody: c.body,
      headers: c.contentType ? { 'content-type': c.contentType } : {},
    });

    expect(res.status).toBe(c.expected.status);
    expect(Object.keys(res.body.error)).toEqual(['message', 'type', 'param', 'code']);
    expect(res.body.error.message).toEqual(expect.any(String));
    if (c.expected.param !== undefined) expect(res.body.error.param).toBe(c.expected.param);
    if (c.expected.code !== undefined) expect(res.body.error.code).toBe(c.expected.code);
    // Every error has a code a client can switch on.
    expect(res.body.error.code).toEqual(expect.any(String));
    expect(JSON.stringify(res.body)).not.toMatch(/\n\s+at |node_modules|\.ts:\d+/);
  });
});
