/**
 * Fireworks' signed dataset URLs are fetched only from its storage hosts (Cloud Storage), the origin
 * of the configured GATEWAY_FIREWORKS_BASE_URL, and hosts the operator adds with
 * GATEWAY_FIREWORKS_DOWNLOAD_HOSTS. A URL on anything else (another loopback address, link-local,
 * private) is refused with a 502 before any connection: a listener there sees none.
 */
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { toFile } from 'openai';
import { loadConfig } from '../../src/config';
import { GatewayError } from '../../src/errors';
import { ProviderRegistry } from '../../src/providers/registry';
import { checkSignedUrl, parseHostList } from '../../src/providers/signed-urls';
import { startFakeFireworks } from '../fakes/fireworks-server';
import { dataset } from '../fine-tuning/harness';
import { gatewaySdk } from '../support/answers';
import { api, gatewayOnFake } from '../support/gateway';

const KEY = 'fw-signed-urls-0123456789abcdef';
const ACCOUNT = 'acme-labs';
const HEADERS = { 'x-gateway-provider': 'fireworks-ai', 'x-gateway-fireworks-account-id': ACCOUNT, authorization: `Bearer ${KEY}` };

const on = gatewayOnFake(
  () => startFakeFireworks({ apiKey: KEY, accountId: ACCOUNT }),
  (fake) => ({ GATEWAY_FIREWORKS_BASE_URL: fake.origin, GATEWAY_PROVIDER_TIMEOUT_MS: '2000' }),
);
/** Listeners where a refused URL points: they count every connection, and must count none. */
let traps: net.Server[];
let trapConnections = 0;
let fileId: string;
const content = dataset(10);

async function listen(server: net.Server, host: string): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return `http://${host}:${(server.address() as AddressInfo).port}`;
}

const trap = () =>
  net.createServer((socket) => {
    trapConnections++;
    socket.destroy();
  });

let trapOrigins: string[];

beforeAll(async () => {
  traps = [trap(), trap()];
  // Another loopback address, and another port of the fake's own address.
  trapOrigins = [await listen(traps[0], '127.0.0.2'), await listen(traps[1], '127.0.0.1')];
  const sdk = gatewaySdk(on.gw, { apiKey: KEY, headers: HEADERS });
  fileId = (await sdk.files.create({ file: await toFile(Buffer.from(content), 'train.jsonl'), purpose: 'fine-tune' })).id;
});

afterEach(() => on.fake.signUrlsOn(on.fake.origin));

afterAll(async () => {
  await Promise.all(traps.map((t) => new Promise((resolve) => t.close(resolve))));
});

const download = () => api(on.gw, 'GET', `/v1/files/${fileId}/content`, { headers: HEADERS });

it('refuses a signed URL on another loopback address or port, link-local or private address, before any connection', async () => {
  const elsewhere = [...trapOrigins, 'http://169.254.169.254', 'http://10.1.2.3:8080', 'http://localhost', 'https://storage.googleapis.com.evil.test'];
  for (const origin of elsewhere) {
    on.fake.signUrlsOn(origin);
    const res = await download();
    expect({ origin, status: res.status, error: res.body.error }).toEqual({
      origin,
      status: 502,
      error: expect.objectContaining({ type: 'provider_error', code: 'signed_url_host_refused', message: expect.stringContaining(new URL(origin).host) }),
    });
    expect(res.body.error.message).not.toContain('X-Goog-Signature');
  }
  expect(trapConnections).toBe(0);
});

it('fetches from a host the operator added with GATEWAY_FIREWORKS_DOWNLOAD_HOSTS', async () => {
  // A bucket proxy on 127.0.0.2 in front of the fake's bucket.
  const proxy = http.createServer((req, res) => {
    const upstream = http.request(
      `${on.fake.origin}${req.url}`,
      { method: req.method, headers: { ...req.headers, host: new URL(on.fake.origin).host } },
      (answer) => {
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
      },
    );
    req.pipe(upstream);
  });
  const origin = await listen(proxy, '127.0.0.2');
  try {
    on.fake.signUrlsOn(origin);
    const registry = (hosts: string) =>
      new ProviderRegistry({ GATEWAY_FIREWORKS_BASE_URL: on.fake.origin, GATEWAY_FIREWORKS_DOWNLOAD_HOSTS: hosts }, { retries: 0, timeoutMs: 2000 });
    const refused = registry('storage.example.com').client('fireworks-ai', { kind: 'headers', headers: HEADERS }).fileContent(fileId);
    await expect(refused).rejects.toMatchObject({ status: 502, code: 'signed_url_host_refused' });
    const added = await registry(`storage.example.com, ${origin}`).client('fireworks-ai', { kind: 'headers', headers: HEADERS }).fileContent(fileId);
    expect(Buffer.concat(await added.stream.toArray()).toString()).toBe(content);
  } finally {
    await new Promise((resolve) => proxy.close(resolve));
  }
});

describe('the host rule', () => {
  const policy = (hosts: string) => ({
    title: 'Fireworks AI',
    env: 'GATEWAY_FIREWORKS_DOWNLOAD_HOSTS',
    hosts: ['storage.googleapis.com', '*.storage.googleapis.com', ...parseHostList(hosts)],
    baseUrls: ['https://api.fireworks.ai'],
  });
  const verdict = (url: string, hosts: string) => {
    try {
      return checkSignedUrl(url, policy(hosts)) === url;
    } catch (err) {
      if (err instanceof GatewayError && err.status === 502) return false;
      throw err;
    }
  };

  const hosts = 'files.example.com, cdn.example.com:8443, *.blob.example.net, http://10.0.0.5:9000';
  it.each([
    ['https://storage.googleapis.com/fw-datasets/a/train.jsonl?X-Goog-Signature=abc', '', true],
    ['https://fw-datasets.storage.googleapis.com/a/train.jsonl', '', true],
    ['https://api.fireworks.ai/some/object', '', true],
    ['http://storage.googleapis.com/fw-datasets/a', '', false],
    ['https://storage.googleapis.com:8443/fw-datasets/a', '', false],
    ['https://storage.googleapis.com.evil.test/a', '', false],
    ['https://evilstorage.googleapis.com/a', '', false],
    ['https://user:pw@storage.googleapis.com/a', '', false],
    ['ftp://storage.googleapis.com/a', '', false],
    ['not a url', '', false],
    ['https://127.0.0.1/a', '', false],
    ['http://[::1]/a', '', false],
    // The operator's hosts, host:port, *.domain (HTTPS) and http(s) origins.
    ['https://files.example.com/a', hosts, true],
    ['http://files.example.com/a', hosts, false],
    ['https://cdn.example.com:8443/a', hosts, true],
    ['https://x.blob.example.net/a', hosts, true],
    ['http://10.0.0.5:9000/a', hosts, true],
    ['http://10.0.0.5:9001/a', hosts, false],
  ])('%s (added: %j) → %s', (url, added, allowed) => {
    expect(verdict(url, added)).toBe(allowed);
  });

  it('refuses a malformed host list at start-up, naming the variable', () => {
    expect(() => loadConfig({ GATEWAY_FIREWORKS_DOWNLOAD_HOSTS: 'ok.example.com, http://x/y' })).toThrow(/GATEWAY_FIREWORKS_DOWNLOAD_HOSTS: 'http:\/\/x\/y'/);
  });
});
