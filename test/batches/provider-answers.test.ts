/**
 * The batch adapters of OpenAI, Azure OpenAI and Together read the provider's batch objects and result
 * lines through zod schemas: a field gone or of another type is the provider's failure, a 502
 * `provider_bad_answer` naming the provider and the field, not an `undefined` met in the runner. One
 * kit, a row per provider: each fake runs a real batch, and doctors one answer (`reshapeNext`) or one
 * result file.
 */
import { GatewayError } from '../../src/errors';
import { ProviderRegistry, type ProviderClient } from '../../src/providers/registry';
import type { BatchRequest, ProviderBatchJob } from '../../src/providers/batch';
import { AZURE_TEST_API_KEY, startFakeAzureOpenAI, type FakeAzureOpenAI } from '../fakes/azure-openai-server';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { startFakeTogether, type FakeTogether } from '../fakes/together-server';
import { eventually, failure } from '../support/expect';
import { chatLine } from './harness';

const HTTP = { baseDelayMs: 1, timeoutMs: 5_000 };
const OPENAI_KEY = 'sk-batch-answers-0123456789';
const TOGETHER_KEY = 'tg-batch-answers-0123456789abcdef';

type Reshape = (body: unknown) => unknown;

/** A fake with doctored answers (`reshapeNext` of test/fakes/kit.ts). */
type Reshaping = { close(): Promise<void>; reshapeNext(method: string, path: string, reshape: Reshape): void };

interface AnswerCase<F extends Reshaping> {
  title: string;
  start(): Promise<F>;
  client(fake: F): ProviderClient;
  model: string;
  /** The path prefix of the provider's `/batches` (create, list) on the fake. */
  batches: string;
  /** Replaces the content of the provider's file `id`. */
  rewriteFile(fake: F, id: string, content: string): void;
  /** A field the adapter reads of a batch (other than `id` and `status`), and a type it is not. */
  retyped: { path: string[]; value: unknown; message: string };
  /** Where the first batch's `id` is in the list `find` reads, as the message names it (OpenAI's list: `data[0].id`). */
  listedId?: { path: Array<string | number>; field: string };
}

/** Replaces a file's content on the OpenAI or Azure fake. */
const rewriteOpenAIFile = (fake: FakeOpenAI | FakeAzureOpenAI, id: string, content: string) => {
  fake.state.files.get(id)!.content = Buffer.from(content);
};

/** Deletes (value undefined) or sets the field at `path` of an object answer. */
const reshaped =
  (path: ReadonlyArray<string | number>, value?: unknown): Reshape =>
  (body) => {
    let at = body as Record<string, any>;
    for (const part of path.slice(0, -1)) at = at[part];
    if (value === undefined) delete at[path[path.length - 1]];
    else at[path[path.length - 1]] = value;
    return body;
  };

async function* requests(count: number): AsyncGenerator<BatchRequest> {
  for (let i = 1; i <= count; i++) {
    const { custom_id, body } = chatLine(`line-${i}`, 'unused');
    yield { customId: custom_id, body };
  }
}

function badAnswers<F extends Reshaping>(row: AnswerCase<F>): void {
  const listedId = row.listedId ?? { path: ['data', 0, 'id'], field: 'data[0].id' };
  describe(`${row.title}’s batch answers`, () => {
    let fake: F;
    let client: ProviderClient;
    beforeAll(async () => {
      fake = await row.start();
      client = row.client(fake);
    });
    afterAll(() => fake.close());

    const submit = async (gatewayBatchId: string) => {
      const input = await client.uploadBatch({ gatewayBatchId, model: row.model, count: 2, requests: () => requests(2) });
      // Azure processes an input file before a batch may use it: its create answers 503 until then.
      const stillProcessing = (err: unknown) => {
        if (err instanceof GatewayError && err.status === 503) return undefined;
        throw err;
      };
      return eventually(() => client.createBatch({ gatewayBatchId, model: row.model, input, count: 2 }).catch(stillProcessing));
    };
    const ended = (job: ProviderBatchJob) =>
      eventually(async () => ((await client.getBatch(job.id)).status === 'completed' ? client.getBatch(job.id) : undefined));

    const expectBadAnswer = (err: Awaited<ReturnType<typeof failure>>, message: string) =>
      expect(err).toMatchObject({ kind: 'provider', status: 502, code: 'provider_bad_answer', message });

    it('a batch without `status` is a bad answer naming the field', async () => {
      const job = await submit('00000000-0000-4000-8000-000000000001');
      fake.reshapeNext('GET', `${row.batches}/${job.id}`, reshaped(['status']));
      expectBadAnswer(await failure(client.getBatch(job.id)), `${row.title} answered without \`status\``);
      // The next answer is whole again.
      expect((await client.getBatch(job.id)).id).toBe(job.id);
    });

    it('a field of another type is named by its place in the answer, on create', async () => {
      fake.reshapeNext('POST', row.batches, reshaped(row.retyped.path, row.retyped.value));
      expectBadAnswer(await failure(submit('00000000-0000-4000-8000-000000000002')), row.retyped.message);
    });

    it('a listed batch without `id` is a bad answer when find looks for an interrupted submission', async () => {
      const gatewayBatchId = '00000000-0000-4000-8000-000000000004';
      await submit(gatewayBatchId);
      fake.reshapeNext('GET', row.batches, reshaped(listedId.path));
      expectBadAnswer(await failure(client.findBatch(gatewayBatchId)), `${row.title} answered without \`${listedId.field}\``);
    });

    it('a result line without `custom_id` is a bad answer', async () => {
      const job = await ended(await submit('00000000-0000-4000-8000-000000000003'));
      const output = job.results.output!;
      row.rewriteFile(fake, output, `${JSON.stringify({ id: 'batch_req_1', response: { status_code: 200, body: {} }, error: null })}\n`);
      const read = async () => {
        for await (const line of client.batchOutput(job)) void line;
      };
      expectBadAnswer(await failure(read()), `${row.title} answered without \`custom_id\` (batch result line)`);
    });
  });
}

badAnswers<FakeOpenAI>({
  title: 'OpenAI',
  start: () => startFakeOpenAI({ apiKey: OPENAI_KEY }),
  client: (fake) =>
    new ProviderRegistry({ GATEWAY_OPENAI_BASE_URL: fake.url }, HTTP).client('openai', { kind: 'headers', headers: { authorization: `Bearer ${OPENAI_KEY}` } }),
  model: 'gpt-4o-mini',
  batches: '/v1/batches',
  rewriteFile: rewriteOpenAIFile,
  retyped: { path: ['request_counts', 'completed'], value: '0', message: 'OpenAI answered `request_counts.completed` as a string where a number was expected' },
});

badAnswers<FakeAzureOpenAI>({
  title: 'Azure OpenAI',
  start: async () => {
    const fake = await startFakeAzureOpenAI();
    fake.registerBatchDeployment('gpt-4o-global-batch', 'gpt-4o');
    return fake;
  },
  client: (fake) =>
    new ProviderRegistry({ GATEWAY_AZURE_OPENAI_BASE_URL: fake.baseUrlTemplate }, HTTP).client('azure-openai', {
      kind: 'headers',
      headers: {
        authorization: `Bearer ${AZURE_TEST_API_KEY}`,
        'x-gateway-azure-resource-name': 'fake-aoai',
        'x-gateway-azure-batch-deployment': 'gpt-4o-global-batch',
      },
    }),
  model: 'gpt-4o',
  batches: '/fake-aoai/openai/batches',
  rewriteFile: rewriteOpenAIFile,
  retyped: { path: ['errors'], value: 'none', message: 'Azure OpenAI answered `errors` as a string where an object was expected' },
});

badAnswers<FakeTogether>({
  title: 'Together AI',
  start: () => startFakeTogether({ apiKey: TOGETHER_KEY }),
  client: (fake) =>
    new ProviderRegistry({ GATEWAY_TOGETHER_BASE_URL: fake.url }, HTTP).client('together-ai', {
      kind: 'headers',
      headers: { authorization: `Bearer ${TOGETHER_KEY}` },
    }),
  model: 'Qwen/Qwen2.5-7B-Instruct',
  batches: '/v1/batches',
  rewriteFile: (fake, id, content) => {
    fake.state.fileContents.set(id, Buffer.from(content));
  },
  // Together lists its batches as a bare array.
  listedId: { path: [0, 'id'], field: '[0].id' },
  retyped: { path: ['job', 'output_file_id'], value: 7, message: 'Together AI answered `job.output_file_id` as a number where a string was expected' },
});
