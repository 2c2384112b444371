/**
 * The general guard behind the id check (src/providers/url.ts): every provider URL is built by one
 * helper that refuses a URL whose path parsing changed (a dot segment folded), and the AWS SDK clients
 * run the same check on the paths they build. The operations are called here directly, past the
 * registry's own id check, so the guard is what stands between a `..` and the fake provider.
 */
import { GatewayError } from '../../src/errors';
import { PROVIDERS } from '../../src/providers/registry';
import { readSettings } from '../../src/providers/settings';
import type { ProviderEnvironment, ProviderModule } from '../../src/providers/module';
import { providerUrl, urlPath } from '../../src/providers/url';
import { startFakeBedrock, type FakeBedrock } from '../fakes/bedrock-server';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { awsHeaders, fakeEndpoints } from './bedrock-harness';

const KEY = 'sk-url-guard-0123456789abcdef';

let openai: FakeOpenAI;
let bedrock: FakeBedrock;

beforeAll(async () => {
  [openai, bedrock] = await Promise.all([startFakeOpenAI({ apiKey: KEY }), startFakeBedrock()]);
});

afterAll(async () => {
  await Promise.all([openai.close(), bedrock.close()]);
});

describe('providerUrl', () => {
  it('keeps the base path and puts each value in one segment', () => {
    expect(providerUrl('http://127.0.0.1:1/v1/', urlPath`/files/${'a/b c'}/content`, { limit: 5, after: undefined })).toBe(
      'http://127.0.0.1:1/v1/files/a%2Fb%20c/content?limit=5',
    );
  });

  it.each(['/files/..', '/files/.', '/files/%2e%2E', '/files/.%2E/cancel', '/files/x/../y'])('refuses %s: parsing would fold it', (path) => {
    const thrown = (() => {
      try {
        return providerUrl('http://127.0.0.1:1/v1', path);
      } catch (err) {
        return err;
      }
    })();
    expect(thrown).toBeInstanceOf(GatewayError);
    expect(thrown).toMatchObject({ status: 400, code: 'invalid_id' });
  });

  /** What parsing makes of the same base, path and query (providerUrl joins most URLs as text): the URL, or refused when the path changed. */
  const parsed = (base: string, path: string, query: Record<string, string | number | undefined>) => {
    const root = base.replace(/\/+$/, '');
    const url = new URL(root + path);
    if (url.pathname !== new URL(root).pathname.replace(/\/$/, '') + path) return 'invalid_id';
    for (const [key, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(key, String(value));
    return url.toString();
  };
  const built = (base: string, path: string, query: Record<string, string | number | undefined>) => {
    try {
      return providerUrl(base, path, query);
    } catch (err) {
      return (err as GatewayError).code;
    }
  };

  it.each([
    ['https://API.Example.com:443/v1/', '/fine_tuning/jobs', { after: 'ftjob-1', limit: 20 }],
    ['http://127.0.0.1:8080', '/files', {}],
    ['https://h.example/openai//', urlPath`/files/${"a b!'()~*é😀"}/content`, { 'api-version': '2024-10-21', q: "x y!'()~*&=?#é😀" }],
    ['https://h.example/base', "/models/a:b@c;d=e,f+g$h&i'j(k)", { empty: '', n: 0, skipped: undefined }],
    ['https://h.example/v1?fixed=1', '/files', { limit: 5 }],
    ['https://user:pw@h.example/v1', '/files', { limit: 5 }],
    ['https://h.example/v1', '/files/a^b`c{d}e|f\\g', {}],
    ['https://h.example/v1', '/files', { lone: 'a\uD800b' }],
  ])('gives %s + %s the URL a parser gives', (base, path, query) => {
    expect(built(base, path, query)).toBe(parsed(base, path, query));
  });
});

/** A module and a connection made from client-mode headers, as the registry makes them (minus its id check). */
function connect(name: string, headers: Record<string, string>, endpoints: Record<string, string>) {
  const module = PROVIDERS.find((p) => p.name === name) as ProviderModule;
  const env: ProviderEnvironment = {
    baseUrls: Object.fromEntries(Object.entries(module.endpoints).map(([key, spec]) => [key, endpoints[spec.env] ?? spec.default])),
    configured: new Set(Object.keys(module.endpoints)),
    downloadHosts: [],
    http: { retries: 0, timeoutMs: 2000 },
  };
  const conn = module.connect(readSettings(module.settings, { kind: 'headers', headers }, null), env);
  return { ops: module.operations, conn };
}

it('an OpenAI-compatible operation given a dot segment builds no URL, and the provider receives nothing', async () => {
  const { ops, conn } = connect('openai', { authorization: `Bearer ${KEY}` }, { GATEWAY_OPENAI_BASE_URL: openai.url });
  const before = openai.state.requests.length;
  await expect(ops.getFile!(conn, '..')).rejects.toMatchObject({ status: 400, code: 'invalid_id' });
  await expect(ops.cancelJob!(conn, '.')).rejects.toMatchObject({ status: 400, code: 'invalid_id' });
  await expect(ops.deleteFile!(conn, '..')).rejects.toMatchObject({ status: 400, code: 'invalid_id' });
  expect(openai.state.requests.length).toBe(before);
});

it('a Bedrock operation given a dot segment is stopped by the SDK middleware before it is signed and sent', async () => {
  const { ops, conn } = connect('bedrock', awsHeaders(bedrock), fakeEndpoints(bedrock));
  const before = bedrock.control.requests.length;
  await expect(ops.getJob!(conn, '..')).rejects.toMatchObject({ status: 400, code: 'invalid_id' });
  await expect(ops.cancelJob!(conn, '.')).rejects.toMatchObject({ status: 400, code: 'invalid_id' });
  expect(bedrock.control.requests.length).toBe(before);
  // The same connection still reaches Bedrock with an ordinary id: only dot segments are refused.
  await expect(ops.getJob!(conn, 'no-such-job')).rejects.toMatchObject({ status: 404 });
  expect(bedrock.control.requests.length).toBe(before + 1);
});
