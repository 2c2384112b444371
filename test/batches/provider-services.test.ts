/**
 * The provider runner on Azure OpenAI's Global Batch and on Together AI's batch service, end to end
 * with the official OpenAI SDK against the gateway and the providers' fakes: each line reaches the
 * provider in its wire format (Azure: the Global-Batch deployment as `model`, `endpoint`
 * `/chat/completions`, api-version; Together: `{custom_id, body}` lines with purpose `batch-api`), the
 * batch shows OpenAI's statuses, and the results come back as OpenAI output and error files.
 */
import { randomBytes } from 'node:crypto';
import type OpenAI from 'openai';
import { AZURE_TEST_API_KEY, startFakeAzureOpenAI, type FakeAzureOpenAI } from '../fakes/azure-openai-server';
import { startFakeTogether, type FakeTogether } from '../fakes/together-server';
import { eventually, type OpenAIGateway, startOpenAIGateway } from '../fine-tuning/harness';
import { api } from '../support/gateway';
import { assertOpenAIShape } from '../support/openai-schemas';
import { chatLine, createBatch, fileLines, finished, taggedFile, receivedLines } from './harness';

const TOGETHER_MODEL = 'Qwen/Qwen2.5-7B-Instruct';

let azure: FakeAzureOpenAI;
let together: FakeTogether;
let client: OpenAI;
let batchGateway: OpenAIGateway;

beforeAll(async () => {
  azure = await startFakeAzureOpenAI();
  together = await startFakeTogether();
  batchGateway = await startOpenAIGateway(`sk-fake-${randomBytes(12).toString('hex')}`, {
    GATEWAY_BATCH_POLL_MS: '50',
    GATEWAY_AZURE_OPENAI_BASE_URL: azure.baseUrlTemplate,
    GATEWAY_TOGETHER_BASE_URL: together.url,
  });
  client = batchGateway.client;
  azure.registerBatchDeployment('gpt-4o-global-batch', 'gpt-4o');
  const integrations: Record<string, unknown>[] = [
    {
      slug: 'azure-batch',
      provider: 'azure-openai',
      credentials: { api_key: AZURE_TEST_API_KEY },
      options: { 'x-gateway-azure-resource-name': 'fake-aoai', 'x-gateway-azure-batch-deployment': 'gpt-4o-global-batch' },
    },
    { slug: 'azure-plain', provider: 'azure-openai', credentials: { api_key: AZURE_TEST_API_KEY }, options: { 'x-gateway-azure-resource-name': 'fake-aoai' } },
    { slug: 'together', provider: 'together-ai', credentials: { api_key: together.apiKey }, options: {} },
  ];
  for (const body of integrations) {
    const res = await api(batchGateway.gw, 'POST', '/v1/integrations', { body });
    if (res.status !== 200) throw new Error(`integration not created: ${JSON.stringify(res.body)}`);
  }
});

afterAll(async () => {
  await batchGateway.stop();
  await azure.close();
  await together.close();
});

describe('Azure OpenAI’s Global Batch as the provider runner', () => {
  it('runs the batch on the Global-Batch deployment and publishes OpenAI output files', async () => {
    const tag = `az-${randomBytes(4).toString('hex')}`;
    const created = await createBatch(client, taggedFile(tag, 'gpt-4o', 4), { 'x-gateway-provider': '@azure-batch' });
    expect(created).toMatchObject({ gateway: { runner: 'provider', provider: 'azure-openai' } });
    const batch = await finished(client, created.id);
    assertOpenAIShape('Batch', batch, 'Azure batch');
    expect(batch).toMatchObject({ status: 'completed', request_counts: { total: 4, completed: 4, failed: 0 } });
    // Azure's empty error file of a batch without failures publishes no gateway error file.
    expect(batch).not.toHaveProperty('error_file_id');

    const remote = [...azure.batches().batches.values()].find((b) => b.metadata?.gateway_batch_id === created.id)!;
    expect(remote).toMatchObject({ endpoint: '/chat/completions', model: 'gpt-4o-global-batch', status: 'completed' });
    const sent = receivedLines(azure.state.files.get(remote.input_file_id)!);
    expect(sent[0]).toMatchObject({ custom_id: `${tag}-1`, url: '/v1/chat/completions', body: { model: 'gpt-4o-global-batch' } });
    const batchCalls = azure.state.requests.filter((r) => r.path.includes('/batches'));
    expect(batchCalls.every((r) => r.query.get('api-version') === '2024-10-21')).toBe(true);

    const output = await fileLines(client, batch.output_file_id!);
    expect(output.map((l) => l.custom_id).sort()).toEqual([1, 2, 3, 4].map((n) => `${tag}-${n}`).sort());
    for (const line of output) assertOpenAIShape('CreateChatCompletionResponse', line.response.body, 'Azure output line body');
    expect(batch.usage!.total_tokens).toBe(output.reduce((sum, l) => sum + l.response.body.usage.total_tokens, 0));
  });

  it('leaves a batch to the gateway runner where the integration names no Global-Batch deployment, and refuses the provider runner there', async () => {
    const tag = `az-plain-${randomBytes(4).toString('hex')}`;
    const content = taggedFile(tag, 'gpt-4o', 1);
    const defaulted = await createBatch(client, content, { 'x-gateway-provider': '@azure-plain', 'x-gateway-batch-runner': 'gateway' });
    expect(defaulted).toMatchObject({ gateway: { runner: 'gateway' } });
    const byDefault = await createBatch(client, content, { 'x-gateway-provider': '@azure-plain' });
    expect(byDefault).toMatchObject({ gateway: { runner: 'gateway' } });
    await expect(createBatch(client, content, { 'x-gateway-provider': '@azure-plain', 'x-gateway-batch-runner': 'provider' })).rejects.toMatchObject({
      status: 400,
      code: 'unsupported_operation',
      param: 'gateway_options.x-gateway-batch-runner',
      message: expect.stringContaining('Global-Batch deployment'),
    });
    // The gateway runner ran them (each request to the deployment named as the model).
    for (const id of [defaulted.id, byDefault.id]) expect((await finished(client, id)).status).toBe('completed');
  });
});

describe('Together AI’s batch service as the provider runner', () => {
  it('uploads {custom_id, body} lines with purpose batch-api and maps Together’s statuses and results', async () => {
    const tag = `tg-${randomBytes(4).toString('hex')}`;
    together.batches.failRequests([`${tag}-2`]);
    const created = await createBatch(client, taggedFile(tag, TOGETHER_MODEL, 3), { 'x-gateway-provider': '@together' });
    expect(created).toMatchObject({ gateway: { runner: 'provider', provider: 'together-ai' } });
    const batch = await finished(client, created.id);
    assertOpenAIShape('Batch', batch, 'Together batch');
    expect(batch).toMatchObject({ status: 'completed', request_counts: { total: 3, completed: 2, failed: 1 } });

    const remote = [...together.batches.batches.values()].at(-1)!;
    expect(together.state.files.get(remote.input_file_id)).toMatchObject({ purpose: 'batch-api', filename: `batch_${created.id}.jsonl` });
    const sent = together.state.fileContents
      .get(remote.input_file_id)!
      .toString()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(sent[0]).toEqual({ custom_id: `${tag}-1`, body: chatLine(`${tag}-1`, TOGETHER_MODEL, `${tag} question 1`).body });

    const output = await fileLines(client, batch.output_file_id!);
    expect(output.map((l) => l.custom_id).sort()).toEqual([`${tag}-1`, `${tag}-3`]);
    for (const line of output) {
      expect(line).toMatchObject({ id: expect.any(String), response: { status_code: 200, request_id: expect.any(String) }, error: null });
      assertOpenAIShape('CreateChatCompletionResponse', line.response.body, 'Together output line body');
    }
    expect(await fileLines(client, batch.error_file_id!)).toEqual([
      expect.objectContaining({ custom_id: `${tag}-2`, response: expect.objectContaining({ status_code: 500 }), error: null }),
    ]);
  });

  it('cancels mid-run: Together ends the job at once, the batch is cancelled with partial output', async () => {
    const tag = `tg-cancel-${randomBytes(4).toString('hex')}`;
    together.batches.setLinesPerPoll(1);
    try {
      const created = await createBatch(client, taggedFile(tag, TOGETHER_MODEL, 10), { 'x-gateway-provider': '@together' });
      await eventually(async () => {
        const remote = [...together.batches.batches.values()].find((b) => b.progress >= 20 && b.status === 'IN_PROGRESS');
        return remote ?? undefined;
      });
      expect((await client.batches.cancel(created.id)).status).toBe('cancelling');
      const batch = await finished(client, created.id);
      expect(batch.status).toBe('cancelled');
      const done = batch.request_counts!.completed;
      expect(done).toBeGreaterThanOrEqual(2);
      expect(batch.request_counts).toEqual({ total: 10, completed: done, failed: 10 - done });
      const errors = await fileLines(client, batch.error_file_id!);
      expect(errors).toHaveLength(10 - done);
      for (const line of errors) expect(line).toMatchObject({ response: null, error: { code: 'batch_cancelled' } });
    } finally {
      together.batches.setLinesPerPoll(Number.POSITIVE_INFINITY);
    }
  });

  it('fails with Together’s error when Together fails the batch', async () => {
    const tag = `tg-fail-${randomBytes(4).toString('hex')}`;
    const created = await createBatch(client, taggedFile(tag, 'no-such/model', 2), { 'x-gateway-provider': '@together' });
    const batch = await finished(client, created.id);
    expect(batch).toMatchObject({ status: 'failed', errors: { data: [{ message: expect.stringContaining('no-such/model') }] } });
  });
});
