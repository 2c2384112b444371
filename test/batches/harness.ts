/** What the batch tests share: input files in OpenAI's `BatchRequestInput` lines, and reading output lines. */
import { randomBytes } from 'node:crypto';
import { toFile } from 'openai';
import { createLogger } from '../../src/logger';
import type { RunningGateway } from '../../src/main';
import { BatchRunner, type BatchRunnerParts } from '../../src/modules/batches/batch-runner';
import { TERMINAL_STATUSES } from '../../src/modules/fine-tuning/fine-tuning.model';
import { unmetered } from '../../src/modules/usage/usage.recorder';
import type OpenAI from 'openai';
import { hostedOnFake, type HostedSetup } from '../support/hosted-kit';
import { assertOpenAIShape } from '../support/openai-schemas';
import { api, startTestGateway, type TestGateway } from '../support/gateway';
import { startFakeBedrock, type FakeBedrock, type FakeBedrockOptions } from '../fakes/bedrock-server';
import { sdk } from '../fine-tuning/harness';
import { bedrockIntegration, DEFAULT_BUCKET, fakeEndpoints, ROLE_ARN } from '../providers/bedrock-harness';

export const chatLine = (customId: string, model: string, content = `Question ${customId}`, body: Record<string, unknown> = {}) => ({
  custom_id: customId,
  method: 'POST',
  url: '/v1/chat/completions',
  body: { model, messages: [{ role: 'user', content }], ...body },
});

export const jsonl = (lines: readonly unknown[]) => lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n') + '\n';

/** A batch file of `count` requests for `model`. */
export const batchFile = (model: string, count: number) => jsonl(Array.from({ length: count }, (_, i) => chatLine(`request-${i + 1}`, model)));

export async function uploadBatchFile(client: OpenAI, content: string) {
  return client.files.create({ file: await toFile(Buffer.from(content), 'requests.jsonl'), purpose: 'batch' });
}

/** A batch file of `count` requests for `model` whose custom ids and questions carry `tag` (`<tag>-<n>`, `<tag> question <n>`). */
export const taggedFile = (tag: string, model: string, count: number) =>
  jsonl(Array.from({ length: count }, (_, i) => chatLine(`${tag}-${i + 1}`, model, `${tag} question ${i + 1}`)));

/** Uploads `content` as a batch file and creates a chat batch of it (`gatewayOptions` say which integration runs it). */
export async function createBatch(client: OpenAI, content: string, gatewayOptions?: Record<string, string>): Promise<OpenAI.Batches.Batch> {
  const file = await uploadBatchFile(client, content);
  // `gateway_options` is the gateway's extension, unknown to the SDK's types.
  return client.batches.create({
    input_file_id: file.id,
    endpoint: '/v1/chat/completions',
    completion_window: '24h',
    gateway_options: gatewayOptions,
  } as never);
}

/** The lines of a file's content (`files.content`), parsed. */
export async function fileLines(client: OpenAI, fileId: string): Promise<any[]> {
  const text = await (await client.files.content(fileId)).text();
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line));
}

/** The parsed lines of a file a fake provider received (the input file of a batch the gateway submitted there). */
export const receivedLines = (file: { content: Buffer }): any[] =>
  file.content
    .toString()
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));

const FINISHED = new Set(['completed', 'failed', 'expired', 'cancelled']);

/** Polls the batch (as a client would) until it has finished. */
export async function finished(client: OpenAI, id: string, timeoutMs = 30_000): Promise<OpenAI.Batches.Batch> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const batch = await client.batches.retrieve(id);
    if (FINISHED.has(batch.status)) return batch;
    if (Date.now() > deadline) throw new Error(`batch ${id} still ${batch.status}: ${JSON.stringify(batch)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * A batch runner over `gateway`'s services, for a test that starts it where it wants (the gateway
 * itself running none: GATEWAY_BATCH_CONCURRENCY=0); `parts` stand in for the gateway's own.
 */
export function batchRunner(gateway: RunningGateway, parts: Partial<BatchRunnerParts> = {}): BatchRunner {
  const { services } = gateway;
  const all: BatchRunnerParts = {
    batches: services.batchRepository,
    lines: services.batchLines,
    files: services.files,
    chat: services.chat,
    meter: () => unmetered,
    meterResults: false,
    records: services.batchRecords,
    target: (scope, batch) => services.batches.target(scope, batch),
    ...parts,
  };
  return new BatchRunner(all, createLogger('silent'), { pollMs: 50, leaseMs: 5000, concurrency: 4, retryBaseMs: 1000 });
}

/** One provider's row of the fine-tuned-model batch test (gatewayRunsTunedModel). */
export interface TunedModelCase<F extends { close(): Promise<void> }> {
  /** The provider's id, as the batch's `gateway.provider` names it. */
  provider: string;
  /** The fake, the gateway's endpoints and integration for it, and the hosted job that tunes a model there. */
  setup: HostedSetup<F>;
  /** The provider's batch service does not take the tuned model, so the gateway runner is the default: the batch asks for none. */
  gatewayByDefault?: boolean;
  /** What serving the tuned model takes at the provider (a deployment), as the batch's gateway options. */
  serve?(fake: F, tunedModel: string): Record<string, string>;
  /**
   * The tuned model each chat call the fake answered for `tag` was for, read back through the
   * provider's own serving resource (deployment, endpoint) to the job's `fine_tuned_model`.
   */
  reached(fake: F, tag: string): string[];
  /** The provider's next chat call fails with `status` in its own error shape. */
  failNextChat(fake: F, status: number): void;
}

/** The gateway runner's batches are picked up and their requests sent at once (tests). */
const FAST_BATCHES = { GATEWAY_BATCH_POLL_MS: '50', GATEWAY_BATCH_CONCURRENCY: '4' };
const LINES = 4;
/** The status the provider refuses one request with: not retried, so it lands in the error file as it is. */
const REFUSED = 400;

/**
 * The acceptance's "gateway runner on a fine-tuned model of each provider", for one provider: a hosted
 * job tunes a model on the provider's fake; a batch of its lines runs on the gateway runner through the
 * OpenAI SDK to `completed`; every answer validates against OpenAI's published schema, the output and
 * error lines join on `custom_id`, the provider was called with its tuned model, and the request it
 * refused is in the error file with its status code.
 */
export function gatewayRunsTunedModel<F extends { close(): Promise<void> }>(row: TunedModelCase<F>): void {
  describe(`a fine-tuned model of ${row.provider}`, () => {
    const hosted = hostedOnFake({ ...row.setup, env: (fake) => ({ ...row.setup.env(fake), ...FAST_BATCHES }) });

    it('runs a batch of it on the gateway runner, answers in OpenAI’s shapes, one refused request in the error file', async () => {
      const { client, fake } = hosted;
      const job = await hosted.waitForStatus((await hosted.createJob()).id, TERMINAL_STATUSES);
      expect(job.status).toBe('succeeded');
      const tuned = job.fine_tuned_model!;
      const tag = `tuned-${randomBytes(4).toString('hex')}`;
      const runner: Record<string, string> = row.gatewayByDefault ? {} : { 'x-gateway-batch-runner': 'gateway' };
      const options = { ...row.serve?.(fake, tuned), ...runner };

      row.failNextChat(fake, REFUSED);
      const created = await createBatch(client, taggedFile(tag, tuned, LINES), options);
      expect(created).toMatchObject({ status: 'validating', model: tuned, gateway: { runner: 'gateway', provider: row.provider } });
      const batch = await finished(client, created.id);
      assertOpenAIShape('Batch', batch, `${row.provider} batch`);
      expect(batch).toMatchObject({ status: 'completed', request_counts: { total: LINES, completed: LINES - 1, failed: 1 } });

      const output = await fileLines(client, batch.output_file_id!);
      const errors = await fileLines(client, batch.error_file_id!);
      const all = Array.from({ length: LINES }, (_, i) => `${tag}-${i + 1}`);
      expect([...output, ...errors].map((l) => l.custom_id).sort()).toEqual(all.sort());
      for (const line of output) {
        expect(line).toMatchObject({ id: expect.stringMatching(/^batch_req_/), response: { status_code: 200, request_id: expect.any(String) }, error: null });
        assertOpenAIShape('CreateChatCompletionResponse', line.response.body, `${row.provider} output line body`);
        // Joinable on custom_id: each answer is to its own line's question.
        expect(line.response.body.choices[0].message.content).toContain(`${tag} question ${line.custom_id.split('-').pop()}`);
      }
      expect(errors).toEqual([expect.objectContaining({ response: expect.objectContaining({ status_code: REFUSED }), error: null })]);
      assertOpenAIShape('ErrorResponse', errors[0].response.body, `${row.provider} error line body`);

      // The provider answered the other requests, each for the tuned model.
      expect(row.reached(fake, tag)).toEqual(Array(LINES - 1).fill(tuned));
    });
  });
}

/** Stores `fake`'s credentials, region, bucket and role as the integration `@my-bedrock` of the test key's workspace. */
async function storeBedrockIntegration(gw: TestGateway, fake: FakeBedrock): Promise<void> {
  const res = await api(gw, 'POST', '/v1/integrations', {
    body: {
      slug: 'my-bedrock',
      provider: 'bedrock',
      ...bedrockIntegration(fake, { 'x-gateway-aws-s3-bucket': DEFAULT_BUCKET, 'x-gateway-aws-role-arn': ROLE_ARN }),
    },
  });
  if (res.status !== 200) throw new Error(`integration not created: ${JSON.stringify(res.body)}`);
}

/**
 * A fake Bedrock (started with `options`) and a gateway on it (`env` added to its endpoints) that holds
 * it as `@my-bedrock`, for the tests of the enclosing file or describe. Read the fields inside the tests.
 */
export function useBedrockGateway(options: FakeBedrockOptions, env: Record<string, string>) {
  const on = {} as { fake: FakeBedrock; gw: TestGateway; client: OpenAI };
  beforeAll(async () => {
    on.fake = await startFakeBedrock(options);
    on.gw = await startTestGateway({ ...fakeEndpoints(on.fake), ...env });
    on.client = sdk(on.gw);
    await storeBedrockIntegration(on.gw, on.fake);
  });
  afterAll(async () => {
    await on.gw?.stop();
    await on.fake?.close();
  });
  return on;
}
