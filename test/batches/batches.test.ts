/**
 * The Batch API with the official OpenAI SDK: batch files checked line by line on upload, batches
 * created, read, listed and cancelled, both faces, tenancy.
 */
import { randomBytes } from 'node:crypto';
import { toFile } from 'openai';
import type OpenAI from 'openai';
import { dataset, sdk, type HostedGateway, type OpenAIGateway, startOpenAIGateway } from '../fine-tuning/harness';
import { api, createOrganisation, gql } from '../support/gateway';
import { batchFile, chatLine, jsonl, uploadBatchFile } from './harness';

const SECRET = `sk-fake-${randomBytes(12).toString('hex')}`;

let gw: HostedGateway;
let client: OpenAI;
let batchGateway: OpenAIGateway;

beforeAll(async () => {
  // A replica that runs no batch: these tests look at batches as created.
  batchGateway = await startOpenAIGateway(SECRET, { GATEWAY_BATCH_CONCURRENCY: '0' });
  ({ gw, client } = batchGateway);
});

afterAll(() => batchGateway.stop());

const viaOpenAI = { 'x-gateway-provider': '@my-openai' };

async function fileCount(): Promise<number> {
  return (await client.files.list()).data.length;
}

describe('batch input files', () => {
  it('accepts a file of chat requests for one model', async () => {
    const file = await uploadBatchFile(client, batchFile('gpt-4o-mini', 3));
    expect(file).toMatchObject({ object: 'file', purpose: 'batch', status: 'processed' });
  });

  it('refuses a bad file with a 400 naming its first bad lines, and keeps nothing', async () => {
    const before = await fileCount();
    const content = jsonl([
      chatLine('a', 'gpt-4o-mini'),
      chatLine('a', 'gpt-4o-mini'),
      '{not json',
      { ...chatLine('c', 'gpt-4o-mini'), method: 'GET' },
      { ...chatLine('d', 'gpt-4o-mini'), url: '/v1/embeddings' },
      chatLine('e', 'gpt-4o'),
      chatLine('f', 'gpt-4o-mini', 'x', { temperature: 7 }),
    ]);
    const err = await uploadBatchFile(client, content).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 400, param: 'file', code: 'invalid_batch_file' });
    const message = (err as Error).message;
    expect(message).toContain('line 2: custom_id "a" is also on line 1');
    expect(message).toContain('line 3: invalid JSON');
    expect(message).toContain('line 4: "method" must be "POST"');
    expect(message).toContain('line 5: "url" must be "/v1/chat/completions"');
    expect(message).toContain('line 6: body.model "gpt-4o" differs from "gpt-4o-mini" on line 1');
    expect(message).toContain('(and 1 more line with errors)');
    expect(await fileCount()).toBe(before);
  });

  it('checks each body with the chat route’s own validation', async () => {
    const err = await uploadBatchFile(client, jsonl([chatLine('a', 'gpt-4o-mini', 'x', { temperature: 7 })])).catch((e: unknown) => e);
    expect((err as Error).message).toContain('line 1: body.temperature: must be at most 2');
    const streamed = await uploadBatchFile(client, jsonl([chatLine('a', 'gpt-4o-mini', 'x', { stream: true })])).catch((e: unknown) => e);
    expect((streamed as Error).message).toContain('line 1: "body.stream" must not be true');
  });

  it('refuses a file without requests', async () => {
    await expect(uploadBatchFile(client, '\n\n')).rejects.toMatchObject({ status: 400 });
  });
});

describe('creating and reading batches', () => {
  let fileId: string;
  beforeAll(async () => {
    fileId = (await uploadBatchFile(client, batchFile('gpt-4o-mini', 2))).id;
  });

  const create = (body: Record<string, unknown> = {}) =>
    client.batches.create({ input_file_id: fileId, endpoint: '/v1/chat/completions', completion_window: '24h', gateway_options: viaOpenAI, ...body } as never);

  it('answers validating at once, with the route and the runner it chose', async () => {
    const before = Math.floor(Date.now() / 1000);
    const batch = await create({ metadata: { run: 'eval-1' } });
    expect(batch).toMatchObject({
      object: 'batch',
      status: 'validating',
      endpoint: '/v1/chat/completions',
      input_file_id: fileId,
      completion_window: '24h',
      model: 'gpt-4o-mini',
      request_counts: { total: 0, completed: 0, failed: 0 },
      metadata: { run: 'eval-1' },
      // OpenAI's batch service runs the model: the provider runner by default.
      gateway: { runner: 'provider', provider: 'openai', integration: '@my-openai' },
    });
    expect(batch.created_at).toBeGreaterThanOrEqual(before);
    expect(batch.expires_at).toBe(batch.created_at + 24 * 3600);
    expect(batch).not.toHaveProperty('output_file_id');
    expect(await client.batches.retrieve(batch.id)).toMatchObject({ id: batch.id, status: 'validating' });
  });

  it('creates once per Idempotency-Key: a retried create answers the same batch', async () => {
    const body = { input_file_id: fileId, endpoint: '/v1/chat/completions', completion_window: '24h', gateway_options: viaOpenAI };
    const headers = { 'idempotency-key': `batch-${fileId}` };
    const first = await api(gw, 'POST', '/v1/batches', { headers, body });
    const again = await api(gw, 'POST', '/v1/batches', { headers, body });
    expect(first.status).toBe(200);
    expect(again.body.id).toBe(first.body.id);
    const other = await api(gw, 'POST', '/v1/batches', { headers, body: { ...body, metadata: { run: 'other' } } });
    expect(other.status).toBe(422);
  });

  it('lists batches newest first, with after and limit', async () => {
    const [a, b] = [await create(), await create()];
    const page = await client.batches.list({ limit: 1 });
    expect(page.data.map((x) => x.id)).toEqual([b.id]);
    expect(page.has_more).toBe(true);
    const next = await client.batches.list({ limit: 1, after: b.id });
    expect(next.data.map((x) => x.id)).toEqual([a.id]);
    const res = await api(gw, 'GET', '/v1/batches?limit=101');
    expect(res.status).toBe(400);
    expect(res.body.error.param).toBe('limit');
  });

  it('refuses other endpoints and completion windows, naming the field', async () => {
    await expect(create({ endpoint: '/v1/embeddings' })).rejects.toMatchObject({ status: 400, param: 'endpoint' });
    await expect(create({ completion_window: '48h' })).rejects.toMatchObject({ status: 400, param: 'completion_window' });
  });

  it('needs a fine-tuned model of the workspace, or an integration', async () => {
    await expect(create({ gateway_options: undefined })).rejects.toMatchObject({ status: 400, param: 'input_file_id', code: 'unknown_model' });
    await expect(create({ gateway_options: { 'x-gateway-provider': '@nope' } })).rejects.toMatchObject({ status: 404 });
    await expect(create({ gateway_options: { ...viaOpenAI, 'x-gateway-batch-runner': 'fast' } })).rejects.toMatchObject({
      status: 400,
      param: 'gateway_options.x-gateway-batch-runner',
    });
  });

  it('refuses a file of another purpose, or none', async () => {
    const training = await client.files.create({ file: await toFile(Buffer.from(dataset()), 'train.jsonl'), purpose: 'fine-tune' });
    await expect(create({ input_file_id: training.id })).rejects.toMatchObject({ status: 400, param: 'input_file_id', code: 'invalid_file_purpose' });
    await expect(create({ input_file_id: '00000000-0000-4000-8000-000000000000' })).rejects.toMatchObject({ status: 404 });
  });

  it('cancels: cancelling at once, and again answers it as it stands', async () => {
    const batch = await create();
    const cancelling = await client.batches.cancel(batch.id);
    expect(cancelling).toMatchObject({ id: batch.id, status: 'cancelling', cancelling_at: expect.any(Number) });
    expect(await client.batches.cancel(batch.id)).toMatchObject({ status: 'cancelling' });
  });

  it('keeps another workspace’s batches and files out of reach (404 like unknown ids)', async () => {
    const batch = await create();
    const other = sdk(await createOrganisation(gw));
    await expect(other.batches.retrieve(batch.id)).rejects.toMatchObject({ status: 404 });
    await expect(other.batches.cancel(batch.id)).rejects.toMatchObject({ status: 404 });
    await expect(other.files.retrieve(fileId)).rejects.toMatchObject({ status: 404 });
    await expect(other.batches.create({ input_file_id: fileId, endpoint: '/v1/chat/completions', completion_window: '24h' })).rejects.toMatchObject({
      status: 404,
    });
    expect((await other.batches.list()).data).toEqual([]);
    await expect(client.batches.retrieve('batch_unknown')).rejects.toMatchObject({ status: 404 });
  });

  it('serves the same batches over GraphQL, with their files and events', async () => {
    const created = await gql(gw, `mutation($input: CreateBatchInput!) { createBatch(input: $input) { id status runner integration } }`, {
      input: { inputFile: fileId, integration: '@my-openai' },
    });
    expect(created.body.errors).toBeUndefined();
    const { id } = created.body.data.createBatch;
    expect(created.body.data.createBatch).toMatchObject({ status: 'VALIDATING', runner: 'PROVIDER', integration: '@my-openai' });
    const read = await gql(
      gw,
      `query($id: ID!) { batch(id: $id) { id model inputFile { id purpose } outputFile { id } errorFile { id } requestCounts { total } events { message data } } batches(limit: 100) { items { id } } }`,
      { id },
    );
    expect(read.body.errors).toBeUndefined();
    expect(read.body.data.batch).toMatchObject({ model: 'gpt-4o-mini', inputFile: { id: fileId, purpose: 'BATCH' }, outputFile: null, errorFile: null });
    expect(read.body.data.batch.events[0]).toMatchObject({ data: { status: 'validating', runner: 'provider', integration: '@my-openai' } });
    expect(read.body.data.batches.items.map((b: { id: string }) => b.id)).toContain(id);
    const cancelled = await gql(gw, `mutation($id: ID!) { cancelBatch(id: $id) { status } }`, { id });
    expect(cancelled.body.data.cancelBatch.status).toBe('CANCELLING');
  });
});
