/**
 * The credentials a provider call used never come back in an answer, a successful one included: a
 * provider echoing the key inside a 2xx JSON object (a file name, a chat answer, an object key that
 * holds it) or in a stream's error event has it replaced by `[redacted]`, through a stored
 * integration whose key the caller never saw, for HTTP providers (providerFetch) and for the AWS SDK's
 * parsed outputs alike. File content is the caller's data and streams back as it is.
 */

import OpenAI, { toFile } from 'openai';
import { DEFAULT_BUCKET, startFakeBedrock, type FakeBedrock } from '../fakes/bedrock-server';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { dataset } from '../fine-tuning/harness';
import { bedrockIntegration, fakeEndpoints } from '../providers/bedrock-harness';
import { gatewaySdk } from '../support/answers';
import { api, startTestGateway, type TestGateway } from '../support/gateway';

const OPENAI_KEY = 'sk-scrubbed-0123456789abcdef';

let openai: FakeOpenAI;
let bedrock: FakeBedrock;
let gw: TestGateway;

beforeAll(async () => {
  [openai, bedrock] = await Promise.all([startFakeOpenAI({ apiKey: OPENAI_KEY }), startFakeBedrock()]);
  gw = await startTestGateway({ GATEWAY_OPENAI_BASE_URL: openai.url, ...fakeEndpoints(bedrock), GATEWAY_PROVIDER_TIMEOUT_MS: '5000' });
  const integrations = [
    { slug: 'scrub-openai', provider: 'openai', credentials: { api_key: OPENAI_KEY } },
    { slug: 'scrub-bedrock', provider: 'bedrock', ...bedrockIntegration(bedrock, { 'x-gateway-aws-s3-bucket': DEFAULT_BUCKET }) },
  ];
  for (const body of integrations) expect((await api(gw, 'POST', '/v1/integrations', { body })).status).toBe(200);
});

afterAll(async () => {
  await gw.stop();
  await Promise.all([openai.close(), bedrock.close()]);
});

const client = (provider: string) => gatewaySdk(gw, { headers: { 'x-gateway-provider': provider } });

it('scrubs the key out of an OpenAI 2xx answer that echoes it, but not out of the file content', async () => {
  const sdk = client('@scrub-openai');
  const filename = `notes-${OPENAI_KEY}.jsonl`;
  const content = dataset(10);
  const uploaded = await sdk.files.create({ file: await toFile(Buffer.from(content), filename), purpose: 'fine-tune' });
  // The provider did store and echo the name with the key in it…
  expect(openai.state.requests.at(-1)).toMatchObject({ method: 'POST', path: '/v1/files' });
  // …and no answer carries it.
  expect(uploaded.filename).toBe('notes-[redacted].jsonl');
  const retrieved = await api(gw, 'GET', `/v1/files/${uploaded.id}`, { headers: { 'x-gateway-provider': '@scrub-openai' } });
  expect(retrieved.status).toBe(200);
  expect(JSON.stringify(retrieved.body)).not.toContain(OPENAI_KEY);
  expect(retrieved.body.filename).toBe('notes-[redacted].jsonl');
  const listed = await api(gw, 'GET', '/v1/files', { headers: { 'x-gateway-provider': '@scrub-openai' } });
  expect(JSON.stringify(listed.body)).not.toContain(OPENAI_KEY);
  expect(await (await sdk.files.content(uploaded.id)).text()).toBe(content);
});

it('scrubs the key out of a chat answer and out of the error event of a stream that fails midway', async () => {
  const sdk = client('@scrub-openai');
  const whole = await api(gw, 'POST', '/v1/chat/completions', {
    body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: `repeat ${OPENAI_KEY}` }] },
    headers: { 'x-gateway-provider': '@scrub-openai' },
  });
  expect(whole.status).toBe(200);
  expect(whole.body.choices[0].message.content).toBe('Answer from gpt-4o-mini: repeat [redacted]');
  openai.failNextStream(1, `upstream rejected key ${OPENAI_KEY}`);
  const stream = await sdk.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }], stream: true });
  const failure = await (async () => {
    for await (const chunk of stream) void chunk;
  })().catch((err: unknown) => err);
  expect(failure).toBeInstanceOf(OpenAI.APIError);
  expect((failure as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ message: 'OpenAI failed while streaming: upstream rejected key [redacted]' });
});

it("scrubs the access key id out of the AWS SDK's parsed 2xx output (an S3 listing that names it)", async () => {
  const accessKeyId = bedrock.credentials.accessKeyId;
  bedrock.s3.putObject(DEFAULT_BUCKET, `gateway-files/${accessKeyId}-train.jsonl`, dataset(10));
  const listed = await api(gw, 'GET', '/v1/files', { headers: { 'x-gateway-provider': '@scrub-bedrock' } });
  expect(listed.status).toBe(200);
  expect(JSON.stringify(listed.body)).not.toContain(accessKeyId);
  expect(listed.body.data.map((f: { id: string }) => f.id)).toContain(`s3://${DEFAULT_BUCKET}/gateway-files/[redacted]-train.jsonl`);
});
