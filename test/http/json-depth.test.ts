/**
 * JSON nested deeper than GATEWAY_JSON_MAX_DEPTH is refused by the body parser on both faces (and in a
 * GraphQL multipart request's `operations`), in each face's error shape; a RangeError that input still
 * causes (the limit raised far) is the caller's 400, never a 500.
 */
import { jsonTooDeep, valueTooDeep } from '../../src/http/json-depth';
import { gatewayFetch } from '../support/answers';
import { api, useTestGateway } from '../support/gateway';

/** `{"a":{"a":…1…}}`, `depth` objects deep. */
const nested = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
/** `[[…1…]]`: one byte a level, so 200 000 levels stay under the 1 MB body limit. */
const arrays = (depth: number) => '['.repeat(depth) + '1' + ']'.repeat(depth);
const bytes = (text: string) => Buffer.from(text);

describe('jsonTooDeep', () => {
  it('counts objects and arrays, not brackets inside strings', () => {
    expect(jsonTooDeep(bytes(nested(3)), 3)).toBe(false);
    expect(jsonTooDeep(bytes(nested(4)), 3)).toBe(true);
    expect(jsonTooDeep(bytes('[[[1]],[[2]]]'), 3)).toBe(false);
    expect(jsonTooDeep(bytes('[[[[1]]]]'), 3)).toBe(true);
    expect(jsonTooDeep(bytes(`{"a":"${'[{'.repeat(100)}"}`), 1)).toBe(false);
  });

  it('knows an escaped quote does not end a string, and an escaped backslash does not escape the quote', () => {
    expect(jsonTooDeep(bytes(String.raw`{"a":"\"[[[[[["}`), 1)).toBe(false);
    expect(jsonTooDeep(bytes(String.raw`{"a":"\\",  "b":[[[1]]]}`), 3)).toBe(true);
    expect(jsonTooDeep(bytes(String.raw`{"a":"\\\"[[[[", "b":1}`), 1)).toBe(false);
  });

  it('scans multi-byte UTF-8 text byte by byte without mistaking it for structure', () => {
    expect(jsonTooDeep(bytes(`{"é✓😀":["日本"]}`), 2)).toBe(false);
    expect(jsonTooDeep(bytes(`{"é✓😀":[["日本"]]}`), 2)).toBe(true);
  });
});

describe('valueTooDeep', () => {
  it('walks a parsed value without recursion, however deep', () => {
    expect(valueTooDeep(JSON.parse(nested(3)), 3)).toBe(false);
    expect(valueTooDeep(JSON.parse(nested(4)), 3)).toBe(true);
    expect(valueTooDeep(JSON.parse(nested(200_000)), 64)).toBe(true);
    expect(valueTooDeep({ a: [1, 'x', null, { b: [] }] }, 4)).toBe(false);
  });
});

describe('the body parser, at the default depth (64)', () => {
  const gw = useTestGateway();

  it('refuses a REST body nested thousands deep with 400 json_too_deep, creating nothing', async () => {
    const res = await api(gw, 'POST', '/v1/labels', {
      rawBody: `{"name":"deep","color_code":${nested(5000)}}`,
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'json_too_deep', param: null, message: 'The JSON body is nested more than 64 levels deep' });
    const labels = await api(gw, 'GET', '/v1/labels?search=deep');
    expect(labels.body.total).toBe(0);
  });

  it('lets 64 levels through to the route (which judges the fields) and refuses 65', async () => {
    const at = (depth: number) =>
      api(gw, 'POST', '/v1/labels', { rawBody: `{"name":"n","x":${nested(depth - 1)}}`, headers: { 'content-type': 'application/json' } });
    const allowed = await at(64);
    expect(allowed.status).toBe(400);
    expect(allowed.body.error).toMatchObject({ param: 'x', code: 'invalid_request' });
    expect((await at(65)).body.error.code).toBe('json_too_deep');
  });

  it('decodes a UTF-16 body before scanning it', async () => {
    const utf16 = (text: string) => new Uint8Array(Buffer.from(text, 'utf16le'));
    const post = (body: BodyInit) =>
      gatewayFetch(`${gw.url}/v1/labels`, {
        method: 'POST',
        headers: { 'x-gateway-api-key': gw.key, 'content-type': 'application/json; charset=utf-16le' },
        body,
      });
    // U+7B22 (a CJK letter) is the bytes 22 7B in UTF-16LE: `"` and `{` to a byte scanner.
    const created = await post(utf16(JSON.stringify({ name: 'wide', description: '\u7b22\u7b22\u7b22' })));
    expect(created.status).toBe(200);
    const label = await api(gw, 'GET', `/v1/labels/${(await created.json()).id}`);
    expect(label.body.description).toBe('\u7b22\u7b22\u7b22');
    const deep = await post(utf16(`{"name":"w","x":${nested(100)}}`));
    expect(deep.status).toBe(400);
    expect((await deep.json()).error.code).toBe('json_too_deep');
  });

  it('refuses GraphQL variables nested 100 000 deep with 400 in the GraphQL shape', async () => {
    const body = `{"query":"query($f: String) { labels(search: $f) { total } }","variables":{"f":${nested(100_000)}}}`;
    const res = await api(gw, 'POST', '/graphql', { rawBody: body, headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(400);
    expect(res.body.errors[0]).toMatchObject({ message: 'The JSON body is nested more than 64 levels deep', extensions: { code: 'BAD_REQUEST' } });
  });

  it('refuses a GraphQL multipart request whose operations are nested too deep', async () => {
    const form = new FormData();
    form.append(
      'operations',
      `{"query":"mutation($f: Upload!) { uploadFile(file: $f, purpose: FINE_TUNE) { id } }","variables":{"f":null,"x":${nested(100)}}}`,
    );
    form.append('map', JSON.stringify({ 0: ['variables.f'] }));
    form.append('0', new File(['{}\n'], 'train.jsonl'));
    const res = await fetch(`${gw.url}/graphql`, { method: 'POST', headers: { 'x-gateway-api-key': gw.key, 'apollo-require-preflight': 'true' }, body: form });
    expect(res.status).toBe(400);
    expect((await res.json()).errors[0]).toMatchObject({ message: 'The JSON body is nested more than 64 levels deep', extensions: { code: 'BAD_REQUEST' } });
  });
});

describe('with the depth limit raised out of the way', () => {
  const gw = useTestGateway({ GATEWAY_JSON_MAX_DEPTH: '10000000' });

  it('answers the RangeError a deep REST body causes with 400 in the error shape, not 500', async () => {
    const res = await api(gw, 'POST', '/v1/labels', { rawBody: `{"name":"deep","x":${arrays(200_000)}}`, headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request' });
  });

  it('answers deep GraphQL variables without a 500', async () => {
    const body = `{"query":"query($f: String) { labels(search: $f) { total } }","variables":{"f":${arrays(200_000)}}}`;
    const res = await api(gw, 'POST', '/graphql', { rawBody: body, headers: { 'content-type': 'application/json' } });
    expect(res.status).toBeLessThan(500);
    expect(res.body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
  });
});
