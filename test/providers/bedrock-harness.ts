/**
 * What the Bedrock tests share: the adapter as the gateway calls it (a ProviderClient from the
 * registry, settings from client-mode headers) against the fake Bedrock, an OpenAI chat dataset with
 * one example lacking a system message, and helpers to read what the fake S3 received.
 */
import { Readable } from 'node:stream';
import { ProviderRegistry, type ProviderClient } from '../../src/providers/registry';
import { DEFAULT_BUCKET, type FakeBedrock } from '../fakes/bedrock-server';
import type { ClientOptions } from '../support/provider-kit';

// The SDK warns once per process that its 2027 releases will need Node 22; irrelevant to these tests.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';

export const ROLE_ARN = 'arn:aws:iam::123456789012:role/BedrockFineTuning';
export const NOVA = 'amazon.nova-micro-v1:0:128k';
export const CLAUDE = 'anthropic.claude-3-haiku-20240307-v1:0:200k';
export const TITAN = 'amazon.titan-text-express-v1:0:8k';
export { DEFAULT_BUCKET };

/** The gateway's endpoint variables for the fake. */
export const fakeEndpoints = (fake: FakeBedrock) => ({
  GATEWAY_BEDROCK_BASE_URL: fake.control.url,
  GATEWAY_BEDROCK_RUNTIME_BASE_URL: fake.runtime.url,
  GATEWAY_S3_BASE_URL: fake.s3.url,
});

/** Client-mode headers with the fake's credentials, region and bucket, and the role jobs run with. */
export const awsHeaders = (fake: FakeBedrock) => ({
  'x-gateway-aws-access-key-id': fake.credentials.accessKeyId,
  'x-gateway-aws-secret-access-key': fake.credentials.secretAccessKey,
  'x-gateway-aws-region': fake.region,
  'x-gateway-aws-s3-bucket': DEFAULT_BUCKET,
  'x-gateway-aws-role-arn': ROLE_ARN,
});

/** The adapter as client mode calls it. */
export function bedrock(fake: FakeBedrock, options: ClientOptions = {}): ProviderClient {
  const registry = new ProviderRegistry(fakeEndpoints(fake), { baseDelayMs: 1, timeoutMs: 5_000, ...options.http });
  return registry.client('bedrock', { kind: 'headers', headers: { ...awsHeaders(fake), ...options.headers } });
}

/** One OpenAI chat example; without a system message when `system` is false. */
export const chatExample = (n: number, system = true) =>
  JSON.stringify({
    messages: [
      ...(system ? [{ role: 'system', content: 'You are terse.' }] : []),
      { role: 'user', content: `Question ${n}?` },
      { role: 'assistant', content: `Answer ${n}.`, weight: 1 },
    ],
  });

/** `examples` chat examples, the fifth without a system message. */
export const chatDataset = (examples = 12) => Array.from({ length: examples }, (_, i) => chatExample(i + 1, i !== 4)).join('\n') + '\n';

const turns = (n: number, text: (t: string) => unknown) => [
  { role: 'user', content: text(`Question ${n}?`) },
  { role: 'assistant', content: text(`Answer ${n}.`) },
];

/** Lines 1 and 5 of chatDataset(12) (the fifth without a system message) in each base model's record format in S3. */
const RECORDS: Record<string, unknown[]> = {
  [NOVA]: [1, 5].map((n) => ({
    schemaVersion: 'bedrock-conversation-2024',
    ...(n === 1 ? { system: [{ text: 'You are terse.' }] } : {}),
    messages: turns(n, (text) => [{ text }]),
  })),
  [CLAUDE]: [1, 5].map((n) => ({ ...(n === 1 ? { system: 'You are terse.' } : {}), messages: turns(n, (text) => text) })),
  [TITAN]: [
    { prompt: 'You are terse.\n\nQuestion 1?', completion: 'Answer 1.' },
    { prompt: 'Question 5?', completion: 'Answer 5.' },
  ],
};

/** The S3 lines of chatDataset(12) converted for `model` (NOVA, CLAUDE or TITAN). */
export function expectRecords(lines: unknown[], model: string): void {
  expect(lines).toHaveLength(12);
  expect([lines[0], lines[4]]).toEqual(RECORDS[model]);
}

/** Uploads `content` for `model` as client mode does: purpose maybe late, size unknown. */
export const upload = (client: ProviderClient, content: string, model: string | undefined, filename = 'train.jsonl') =>
  client.uploadFile({ filename, purpose: 'fine-tune', model, open: () => Readable.from([Buffer.from(content)]) });

/** The bytes the fake S3 holds for an `s3://` URI, as JSON lines. */
export function storedLines(fake: FakeBedrock, uri: string): unknown[] {
  const [, bucket, key] = /^s3:\/\/([^/]+)\/(.+)$/.exec(uri) ?? [];
  const bytes = fake.s3.getObject(bucket, key);
  if (!bytes) throw new Error(`no object at ${uri}`);
  return bytes
    .toString('utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
}

/** How many requests each fake server saw (to prove none was made). */
export const requestCount = (fake: FakeBedrock) => fake.s3.state.requests.length + fake.control.requests.length + fake.runtime.requests.length;

/** `fake`'s credentials and region (and `options`) as the `credentials` and `options` of a stored integration. */
export const bedrockIntegration = (fake: FakeBedrock, options: Record<string, string> = {}) => ({
  credentials: { aws_access_key_id: fake.credentials.accessKeyId, aws_secret_access_key: fake.credentials.secretAccessKey },
  options: { 'x-gateway-aws-region': fake.region, ...options },
});
