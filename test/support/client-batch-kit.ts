/**
 * The client-mode batch contract (issue 25): what every provider's batch service must do behind
 * OpenAI's Batch API when a caller names it in `x-gateway-provider` and talks to the gateway with the
 * official OpenAI SDK. One script, written once: upload a `batch` file, create, poll to the end,
 * download the output and error files, cancel another batch, page through the list; nothing stored;
 * every answer checked against OpenAI's document (the SDK goes through `gatewayFetch`) and every
 * result line against OpenAI's `BatchRequestOutput`; hostile ids and settings refused with a 400
 * naming them before any connection; no credential in an answer or a log line. A provider's test
 * file calls `clientBatchContract` with its fake's view and keeps only what is its own.
 *
 * The defects other gateways have (docs/batches.md, client mode) each have a check here: storage URIs
 * as ids, millisecond timestamps, provider status words, lost paging, error lines without
 * `custom_id`, output ids pointing at a folder.
 */
import type OpenAI from 'openai';
import { toFile } from 'openai';
import Ajv2020 from 'ajv/dist/2020';
import { clientSdk } from './client-mode-kit';
import { api, type TestGateway } from './gateway';

type Headers = Record<string, string>;
type Batch = OpenAI.Batches.Batch;

const STATUSES = ['validating', 'failed', 'in_progress', 'finalizing', 'completed', 'expired', 'cancelling', 'cancelled'];
const TIMES = [
  'created_at',
  'in_progress_at',
  'expires_at',
  'finalizing_at',
  'completed_at',
  'failed_at',
  'expired_at',
  'cancelling_at',
  'cancelled_at',
] as const;

/** A provider's side of the contract. Functions, so that each test reads what `beforeAll` started. */
export interface ClientBatchSpec {
  gw(): TestGateway;
  /** Raw headers with the settings: `x-gateway-provider`, its settings, the key in `authorization`. */
  headers(): Headers;
  /** Requests the provider's fake(s) have seen so far, to show a refusal made none. */
  seen(): number;
  /** The model every line names, as the provider takes it (an Azure Global-Batch deployment). */
  model: string;
  /** Makes the provider fail the requests with these custom_ids (they land in the error file). */
  failRequests(customIds: readonly string[]): void;
  /** The credentials' values: never in an answer or a log line. */
  secrets(): string[];
  /** Every log line the gateway wrote (startTestGateway's `logs`). */
  logs(): string[];
  /** Settings that must not reach a URL: [header, value]; each refused naming the header. */
  hostile: Array<[string, string]>;
  /** A batch handle of this provider that its settings must refuse (another account, bucket, path); none where ids pass by pattern only. */
  foreignHandle?: string;
  /** The provider's name, as `x-gateway-provider` spells it (to forge ids). */
  provider: string;
  /** Checks on the provider's side after the pass (what it received: native lines, fields). */
  after?(pass: BatchPass): void;
  /** Makes the provider's batch `handle` end `expired` at its next step (where the fake can). */
  expire?(handle: string): void;
  /** Makes the provider's batch `handle` fail at its next step (where the fake can). */
  fail?(handle: string): void;
  /** Requests in each batch file (default 4; Bedrock takes no job under 100). */
  requests?: number;
  /** The status a cancel answers (providers without `cancelling` end at once). */
  cancelled: Array<'cancelling' | 'cancelled'>;
}

/** What one pass produced, for the provider's own checks. */
export interface BatchPass {
  uploaded: OpenAI.Files.FileObject;
  batch: Batch;
  done: Batch;
  output: Record<string, any>[];
  errors: Record<string, any>[];
}

/** OpenAI's `BatchRequestOutput` (the batch guide's output line), checked on every line the gateway serves. */
const validateLine = new Ajv2020({ strict: false, allErrors: true }).compile({
  type: 'object',
  required: ['id', 'custom_id', 'response', 'error'],
  additionalProperties: false,
  properties: {
    id: { type: 'string' },
    custom_id: { type: 'string', minLength: 1 },
    response: {
      type: ['object', 'null'],
      required: ['status_code', 'request_id', 'body'],
      properties: { status_code: { type: 'integer' }, request_id: { type: 'string' }, body: { type: 'object' } },
    },
    error: { type: ['object', 'null'], required: ['code', 'message'], properties: { code: { type: 'string' }, message: { type: 'string' } } },
  },
});

/** `req-1` … `req-n`: the custom_ids of a batch file of `n` requests. */
export const requestIds = (n = 4) => Array.from({ length: n }, (_, i) => `req-${i + 1}`);
const CUSTOM_IDS = requestIds();
const FAILING = 'req-3';

/** The batch file: one chat request per custom_id, all for `model`. */
export function batchFile(model: string, customIds: readonly string[] = CUSTOM_IDS): string {
  return customIds
    .map((id, i) => ({
      custom_id: id,
      method: 'POST',
      url: '/v1/chat/completions',
      body: { model, messages: [{ role: 'user', content: `Question ${i + 1}: what is ${i} + ${i}?` }], max_tokens: 20 },
    }))
    .map((line) => `${JSON.stringify(line)}\n`)
    .join('');
}

/** Seconds, not milliseconds: within a day of now. */
function expectSeconds(batch: Batch): void {
  const now = Date.now() / 1000;
  for (const name of TIMES) {
    const value = batch[name];
    if (value === undefined || value === null) continue;
    expect(Number.isInteger(value)).toBe(true);
    expect(Math.abs(value - now)).toBeLessThan(2 * 24 * 3600);
  }
}

/** Every batch the gateway answers: our id (never a storage URI), OpenAI's status words and times in seconds. */
function expectOpenAIBatch(batch: Batch): void {
  expect(batch.id).toMatch(/^batch_cb1[A-Za-z0-9_-]+$/);
  expect(STATUSES).toContain(batch.status);
  expect(batch).toMatchObject({ object: 'batch', endpoint: '/v1/chat/completions', completion_window: '24h' });
  expectSeconds(batch);
  for (const id of [batch.id, batch.input_file_id, batch.output_file_id, batch.error_file_id]) if (id) expect(id).not.toMatch(/^(s3|gs):\/\//);
}

const jsonLines = (text: string) =>
  text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, any>);

async function download(sdk: OpenAI, id: string): Promise<Record<string, any>[]> {
  const lines = jsonLines(await (await sdk.files.content(id)).text());
  for (const line of lines) expect({ line, valid: validateLine(line), errors: validateLine.errors }).toMatchObject({ valid: true });
  return lines;
}

/** Polls the batch until it has ended; every answer on the way is OpenAI's. */
async function follow(sdk: OpenAI, id: string, until: readonly string[] = ['completed', 'failed', 'expired', 'cancelled']): Promise<Batch> {
  let batch = await sdk.batches.retrieve(id);
  for (let i = 0; i < 20 && !until.includes(batch.status); i++) {
    expectOpenAIBatch(batch);
    batch = await sdk.batches.retrieve(id);
  }
  expectOpenAIBatch(batch);
  return batch;
}

/** Upload → create → poll → output and error files → their file objects. */
async function exercise(spec: ClientBatchSpec, sdk: OpenAI): Promise<BatchPass> {
  const ids = requestIds(spec.requests);
  const content = batchFile(spec.model, ids);
  const uploaded = await sdk.files.create({ file: await toFile(Buffer.from(content), 'requests.jsonl'), purpose: 'batch' });
  expect(uploaded).toMatchObject({ object: 'file', purpose: 'batch', filename: 'requests.jsonl' });
  expect(uploaded.id).not.toMatch(/^(s3|gs):\/\//);
  spec.failRequests([FAILING]);

  const batch = await sdk.batches.create({
    input_file_id: uploaded.id,
    endpoint: '/v1/chat/completions',
    completion_window: '24h',
    metadata: { team: 'client-mode' },
  });
  expectOpenAIBatch(batch);
  expect(batch).toMatchObject({ input_file_id: uploaded.id });
  // Stable: the same batch answers the same id.
  expect((await sdk.batches.retrieve(batch.id)).id).toBe(batch.id);

  const done = await follow(sdk, batch.id);
  expect(done).toMatchObject({ id: batch.id, status: 'completed', request_counts: { total: ids.length, completed: ids.length - 1, failed: 1 } });
  expect(done.completed_at).toEqual(expect.any(Number));
  expect(done.output_file_id).toMatch(/^file-cbo1/);
  expect(done.error_file_id).toMatch(/^file-cbe1/);

  const output = await download(sdk, done.output_file_id!);
  expect(output.map((l) => l.custom_id).sort()).toEqual(ids.filter((id) => id !== FAILING).sort());
  for (const line of output) expect(line.response).toMatchObject({ status_code: 200, body: { object: 'chat.completion', usage: expect.any(Object) } });
  const errors = await download(sdk, done.error_file_id!);
  expect(errors.map((l) => l.custom_id)).toEqual([FAILING]);
  expect(errors[0].response?.status_code ?? 0).not.toBe(200);

  expect(await sdk.files.retrieve(done.output_file_id!)).toMatchObject({ id: done.output_file_id, object: 'file', purpose: 'batch_output' });
  const pass = { uploaded, batch, done, output, errors };
  spec.after?.(pass);
  return pass;
}

/** A 400 naming `param` (or matching it), and the provider left untouched. */
async function expectRefused(spec: ClientBatchSpec, method: string, path: string, param: string | RegExp, body?: unknown, headers = spec.headers()) {
  const before = spec.seen();
  const res = await api(spec.gw(), method, path, { headers, body });
  expect(res.status).toBe(400);
  expect(res.body.error).toMatchObject({ type: 'invalid_request_error', param: typeof param === 'string' ? param : expect.stringMatching(param) });
  expect(spec.seen()).toBe(before);
  return res;
}

const forged = (prefix: string, text: string) => prefix + Buffer.from(text).toString('base64url');
/** The provider's handle inside one of our batch ids (what the fake knows the batch by). */
const handleOf = (id: string) => Buffer.from(id.slice('batch_cb1'.length), 'base64url').toString('utf8').split('\n')[1];

async function createBatch(sdk: OpenAI, spec: ClientBatchSpec, name: string): Promise<Batch> {
  const uploaded = await sdk.files.create({ file: await toFile(Buffer.from(batchFile(spec.model, requestIds(spec.requests))), name), purpose: 'batch' });
  return sdk.batches.create({ input_file_id: uploaded.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
}

/** The shared client-mode batch tests, inside the caller's `describe`. */
export function clientBatchContract(spec: ClientBatchSpec) {
  /** Every answer the SDK received in these tests, for the credentials check at the end. */
  const answers: string[] = [];
  const sdk = () => clientSdk(spec.gw(), spec.headers(), (text) => void answers.push(text));

  it('runs a batch end to end with the OpenAI SDK: upload, create, poll, output and error files; nothing stored', async () => {
    await exercise(spec, sdk());
    expect((await api(spec.gw(), 'GET', '/v1/batches')).body.data).toEqual([]);
    expect((await api(spec.gw(), 'GET', '/v1/files')).body.data).toEqual([]);
  });

  it('refuses a bad input file with 400 naming input_file_id, before any batch is made at the provider', async () => {
    const count = async () => (await api(spec.gw(), 'GET', '/v1/batches?limit=100', { headers: spec.headers() })).body.data.length;
    const before = await count();
    const line = (id: string, model: string) => batchFile(model, [id]);
    for (const [name, content, reason] of [
      ['duplicate.jsonl', line('a', spec.model) + line('a', spec.model), /custom_id "a" is also on line 1/],
      ['two-models.jsonl', line('a', spec.model) + line('b', `${spec.model}-other`), /one model per file/],
      ['garbage.jsonl', `${line('a', spec.model)}{not json\n`, /line 2/],
    ] as const) {
      const uploaded = await sdk().files.create({ file: await toFile(Buffer.from(content), name), purpose: 'batch' });
      const res = await api(spec.gw(), 'POST', '/v1/batches', {
        headers: spec.headers(),
        body: { input_file_id: uploaded.id, endpoint: '/v1/chat/completions', completion_window: '24h' },
      });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ param: 'input_file_id', code: 'invalid_batch_file', message: expect.stringMatching(reason) });
    }
    expect(await count()).toBe(before);
  });

  if (spec.expire) {
    const expire = spec.expire;
    it('ends an expired batch `expired`, every request without a result in the error file as batch_expired', async () => {
      const batch = await createBatch(sdk(), spec, 'expire.jsonl');
      expire(handleOf(batch.id));
      const ended = await follow(sdk(), batch.id);
      // The counts are the provider's where it reports them (OpenAI's fake counts no expired request as failed).
      expect(ended).toMatchObject({ status: 'expired', expired_at: expect.any(Number), request_counts: { total: requestIds(spec.requests).length } });
      const errors = await download(sdk(), ended.error_file_id!);
      expect(errors.map((l) => l.custom_id).sort()).toEqual(requestIds(spec.requests).sort());
      for (const line of errors) expect(line).toMatchObject({ response: null, error: { code: 'batch_expired' } });
    });
  }

  if (spec.fail) {
    const fail = spec.fail;
    it("answers a batch the provider failed `failed`, with the provider's reason in `errors` and no files", async () => {
      const batch = await createBatch(sdk(), spec, 'fail.jsonl');
      fail(handleOf(batch.id));
      const ended = await follow(sdk(), batch.id);
      expect(ended).toMatchObject({ status: 'failed', failed_at: expect.any(Number), errors: { object: 'list', data: [{ message: expect.any(String) }] } });
      expect(ended.output_file_id).toBeUndefined();
      const missing = await api(spec.gw(), 'GET', `/v1/files/${batch.id.replace('batch_cb1', 'file-cbo1')}/content`, { headers: spec.headers() });
      expect(missing.status).toBe(404);
    });
  }

  it("cancels a batch at the provider, answering OpenAI's cancel words", async () => {
    const batch = await createBatch(sdk(), spec, 'cancel.jsonl');
    const cancelled = await sdk().batches.cancel(batch.id);
    expectOpenAIBatch(cancelled);
    expect(spec.cancelled).toContain(cancelled.status);
    const ended = await follow(sdk(), batch.id);
    expect(ended.status).toBe('cancelled');
    expect(ended.cancelled_at).toEqual(expect.any(Number));
  });

  it('pages the list with the provider cursor as `after`, losing no batch', async () => {
    const uploaded = await sdk().files.create({
      file: await toFile(Buffer.from(batchFile(spec.model, requestIds(spec.requests))), 'paging.jsonl'),
      purpose: 'batch',
    });
    const created = [];
    for (let i = 0; i < 3; i++)
      created.push((await sdk().batches.create({ input_file_id: uploaded.id, endpoint: '/v1/chat/completions', completion_window: '24h' })).id);
    const first = await sdk().batches.list({ limit: 2 });
    expect(first.data).toHaveLength(2);
    expect(first.has_more).toBe(true);
    const raw = (await api(spec.gw(), 'GET', '/v1/batches?limit=2', { headers: spec.headers() })).body;
    expect(raw).toMatchObject({ object: 'list', has_more: true, first_id: first.data[0].id, last_id: expect.any(String) });
    const second = (await api(spec.gw(), 'GET', `/v1/batches?limit=2&after=${encodeURIComponent(raw.last_id)}`, { headers: spec.headers() })).body;
    expect(second.data.map((b: Batch) => b.id)).not.toContain(first.data[1].id);
    // The SDK's auto-paging (after = the last batch's id) reaches every batch once.
    const seen: string[] = [];
    for await (const batch of sdk().batches.list({ limit: 2 })) {
      expectOpenAIBatch(batch);
      seen.push(batch.id);
    }
    expect(new Set(seen).size).toBe(seen.length);
    for (const id of created) expect(seen).toContain(id);
  });

  it('refuses hostile, forged and foreign ids with 400 naming them, before any connection', async () => {
    const p = spec.provider;
    for (const id of [
      'batch_cb1!!',
      forged('batch_cb1', `${p}\n../../files`),
      forged('batch_cb1', `${p}\nbatch_x/../../admin`),
      forged('batch_cb1', `${p === 'openai' ? 'together-ai' : 'openai'}\nbatch_abc`),
      `${forged('batch_cb1', `${p}\nbatch_abc`)}=`,
      ...(spec.foreignHandle ? [forged('batch_cb1', `${p}\n${spec.foreignHandle}`)] : []),
    ]) {
      await expectRefused(spec, 'GET', `/v1/batches/${encodeURIComponent(id)}`, 'batch_id');
      await expectRefused(spec, 'POST', `/v1/batches/${encodeURIComponent(id)}/cancel`, 'batch_id');
    }
    await expectRefused(spec, 'GET', `/v1/batches?after=${forged('batch_cb1', `${p}\n../x`)}`, 'after');
    for (const id of [forged('file-cbo1', `${p}\n../../x`), forged('file-cbe1', `${p === 'openai' ? 'vertex-ai' : 'openai'}\nbatch_abc`)])
      await expectRefused(spec, 'GET', `/v1/files/${encodeURIComponent(id)}/content`, 'file_id');
    for (const inputFileId of ['..', '../../etc/passwd', 's3://other-bucket/x.jsonl', forged('file-cbi1', `${p}\n../../x`)])
      await expectRefused(spec, 'POST', '/v1/batches', 'input_file_id', {
        input_file_id: inputFileId,
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
      });
  });

  if (spec.hostile.length > 0)
    it.each(spec.hostile)('refuses the setting %s %j with 400 naming it, before any connection', async (header, value) => {
      await expectRefused(spec, 'GET', '/v1/batches', header, undefined, { ...spec.headers(), [header]: value });
    });

  it('never put a credential in an answer or a log line (the tests above)', () => {
    expect(answers.length).toBeGreaterThan(10);
    expect(spec.logs().some((l) => l.includes('/v1/batches'))).toBe(true);
    const texts = [...answers, ...spec.logs()];
    for (const secret of spec.secrets()) for (const text of texts) expect(text).not.toContain(secret);
  });
}
