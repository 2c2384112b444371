/**
 * The adapter contract: what every provider adapter must do against its fake, over real HTTP,
 * through the registry as the gateway calls it. A provider's adapter test calls `adapterContract`
 * with its fake and what is particular to it (how a dataset is uploaded and what is stored, the
 * statuses a job walks through, how it cancels, its error words), and keeps in its own file only
 * the behaviour no other provider has.
 */
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { HttpPolicy } from '../../src/providers/http';
import { isTerminal } from '../../src/modules/fine-tuning/fine-tuning.model';
import type { ProviderClient } from '../../src/providers/registry';
import type { ChatChunk, CreateJobInput, JobStatus, ProviderFile, ProviderJob } from '../../src/providers/types';
import type { FailOptions, RecordedRequest } from '../fakes/kit';
import { eventually, failure } from './expect';

export interface ClientOptions {
  http?: HttpPolicy;
  /** Added to (or, when undefined, removed from) the provider's settings headers. */
  headers?: Record<string, string | undefined>;
}

export interface FakeUnderTest {
  state: { requests: RecordedRequest[] };
  failNext(method: string, path: string, status: number, options?: FailOptions): void;
  delayNext(method: string, path: string, ms: number): void;
}

/** A provider's side of the contract. Functions, so that each test reads the fake started for it. */
export interface AdapterUnderTest {
  /** The adapter as the gateway calls it, with the fake's settings. */
  client(options?: ClientOptions): ProviderClient;
  /** The fake started for the running test: its request log (all its servers), injected failures and delays. */
  fake(): FakeUnderTest;
  files: {
    /** Uploads a fine-tune dataset of `examples` lines named `filename` the way client mode streams one. */
    upload(examples: number, filename: string): Promise<ProviderFile>;
    /** The bytes the provider serves back for that upload (its converted form, where it converts). */
    content(file: ProviderFile, examples: number): Buffer;
    /** The request path (or its prefix, where it names a generated key) of a streamed upload, for an injected failure. */
    uploadPath: string;
    /** Where the upload is an idempotent PUT of a key the gateway chose (S3): retried when answered 5xx. */
    uploadPut?: boolean;
    /** The cursor a last page carries: none, or (where the provider's list is unpaged) its last id. */
    lastPageCursor: 'none' | 'last id';
    /** The order files are listed in: newest first (default), or oldest first where the provider lists by key (S3). */
    order?: 'newest first' | 'oldest first';
    /** The content comes with its size (S3); elsewhere the size may be unknown. */
    sizedContent?: boolean;
    /** A file read back is the upload's answer (Together's moves its validation on; Fireworks' read has no size). */
    readsAsUploaded?: boolean;
    /** Where files are objects of a bucket: puts one outside the gateway's prefix, which no listing may show. */
    putForeign?: () => void;
    /** The code of the provider's 404 for a deleted file. */
    notFoundCode?: string;
  };
  jobs: {
    /** Creates a job on `extra.trainingFile`, or on a freshly uploaded dataset. */
    create(extra?: Partial<CreateJobInput>): Promise<ProviderJob>;
    /** The statuses `getJob` reports from creation until the job is done. */
    statuses: JobStatus[];
    /** The request path of a create and of a list, for injected failures. */
    createPath: string;
    /** True where a create carries an idempotency token, so that one answered 5xx is retried (one job made). */
    createRetried?: boolean;
    listPath: string;
    /** An id of the provider's form that names no job, and the code of the provider's 404. */
    unknown: { id: string; code?: string };
    /** What the first cancel answers (some providers report `running` until they have stopped); null: no cancel. */
    cancelledAs: JobStatus | null;
    /** How the provider words its refusal to cancel a finished job. */
    cancelRefusal?: { code?: string; message?: RegExp };
    /** What the provider cannot take: refused with a 400 naming the field (its path), before any request. */
    refused?: Array<[what: string, input: Partial<CreateJobInput>, dottedPath: string]>;
    /** Makes the fake fail a job with `reason`: it then reads `failed` with `code`, and (where given) an error event first. */
    failed?: { fail(id: string, reason: string): void; code: string; event?: (reason: string) => string };
    /** Where a hosted job is named after its gateway job id: findJob finds it after an interrupted submission. */
    findsHosted?: boolean;
  };
  /** Required settings headers, each refused when missing, and hostile values of settings, refused before any connection. */
  settings: { required: string | string[]; hostile: Array<[header: string, value: string]> };
  /** Headers with a wrong secret, the secret, and the status (and code) the provider answers it with. */
  wrongCredentials: { headers: Record<string, string>; secret: string; status: number; code?: string };
  /** The code of the provider's 429 (Bedrock's ThrottlingException), relayed once the retries are spent. */
  throttledCode?: string;
  /** Chat, where the provider has it: a model its fake answers `Answer from <model>: <last user text>`. */
  chat?: { model: string; abandonedStreams(): number };
}

/** Polls a job until it is done, and returns the statuses read on the way. */
export async function runToEnd(client: ProviderClient, id: string, polls = 30): Promise<JobStatus[]> {
  const statuses: JobStatus[] = [];
  while (statuses.length < polls && !(statuses.length && isTerminal(statuses.at(-1)!))) statuses.push((await client.getJob(id)).status);
  return statuses;
}

/** A job as an adapter maps one just created, to compare whole: `fields`, and for the rest nothing yet. */
export const createdJob = (fields: Partial<Record<keyof ProviderJob, unknown>>) => ({
  fineTunedModel: null,
  servingModel: null,
  trainedTokens: null,
  error: null,
  createdAt: expect.any(Number),
  finishedAt: null,
  estimatedFinish: null,
  resultFiles: [],
  seed: null,
  metadata: null,
  ...fields,
});

/** `n` OpenAI chat examples, one a line, with non-ASCII text. */
export const chatDataset = (n = 5): Buffer =>
  Buffer.from(
    Array.from({ length: n }, (_, i) =>
      JSON.stringify({
        messages: [
          { role: 'user', content: `Q${i} — ünï` },
          { role: 'assistant', content: `A${i}` },
        ],
      }),
    ).join('\n') + '\n',
  );

/** A stream yielding `content` in small pieces, as an upload arrives. */
export const pieces = (content: Buffer, size = 100): Readable =>
  Readable.from(
    (function* () {
      for (let i = 0; i < content.length; i += size) yield content.subarray(i, i + size);
    })(),
  );

export async function readAll(stream: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

/** Waits a few ms so that the next object a fake creates has a later creation time. */
export const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

const requestsTo = (adapter: AdapterUnderTest, method: string, path: string) =>
  adapter.fake().state.requests.filter((r) => r.method === method && r.path.startsWith(path));

/** A `code` to match where the provider has one. */
const withCode = (code: string | undefined) => (code ? { code } : {});

type FakeServerLike = Pick<FakeUnderTest, 'failNext' | 'delayNext'> & { requests: RecordedRequest[] };

/**
 * One fake under test over a provider's several servers (Bedrock's S3, control plane and runtime):
 * the requests of all of them, and a failure or delay sent to the server whose path prefix it names.
 */
export function severalServers(servers: Array<[pathPrefix: string, server: FakeServerLike]>, fallback: FakeServerLike): FakeUnderTest {
  const serverOf = (path: string) => servers.find(([prefix]) => path.startsWith(prefix))?.[1] ?? fallback;
  const all = [...servers.map(([, server]) => server), fallback];
  return {
    state: { requests: all.flatMap((server) => server.requests) },
    failNext: (method, path, status, options) => serverOf(path).failNext(method, path, status, options),
    delayNext: (method, path, ms) => serverOf(path).delayNext(method, path, ms),
  };
}

export function adapterContract(name: string, adapter: AdapterUnderTest): void {
  describe(`${name} adapter contract`, () => {
    filesContract(adapter);
    jobsContract(adapter);
    settingsContract(adapter);
    errorsContract(adapter);
    if (adapter.chat) chatContract(adapter, adapter.chat);
  });
}

function filesContract(adapter: AdapterUnderTest) {
  const order = adapter.files.order ?? 'newest first';
  it(`files: uploads, reads, lists ${order} page by page, serves the content and deletes`, async () => {
    const client = adapter.client();
    const files: ProviderFile[] = [];
    for (const n of [3, 4, 5]) {
      files.push(await adapter.files.upload(n, `set-${n}.jsonl`));
      await tick();
    }
    adapter.files.putForeign?.();
    const read = await client.getFile(files[1].id);
    expect(read).toMatchObject({ id: files[1].id, filename: 'set-4.jsonl', purpose: 'fine-tune' });
    if (adapter.files.readsAsUploaded) expect(read).toEqual({ ...files[1], createdAt: expect.any(Number) });

    const listed = order === 'newest first' ? [...files].reverse() : files;
    const first = await client.listFiles({ limit: 2 });
    expect(first.data.map((f) => f.id)).toEqual([listed[0].id, listed[1].id]);
    expect(first).toMatchObject({ hasMore: true, nextAfter: expect.any(String) });
    const rest = await client.listFiles({ limit: 2, after: first.nextAfter! });
    expect(rest).toMatchObject({ hasMore: false, data: [{ id: listed[2].id }] });
    expect(rest.nextAfter).toBe(adapter.files.lastPageCursor === 'none' ? null : listed[2].id);
    expect((await client.listFiles({ purpose: 'batch' })).data).toEqual([]);

    const content = await client.fileContent(files[1].id);
    const served = adapter.files.content(files[1], 4);
    expect((await readAll(content.stream)).equals(served)).toBe(true);
    expect(adapter.files.sizedContent ? [served.length] : [null, served.length]).toContain(content.bytes);

    await client.deleteFile(files[1].id);
    expect(await failure(client.getFile(files[1].id), 'provider')).toMatchObject({ status: 404, ...withCode(adapter.files.notFoundCode) });
    expect(await failure(client.deleteFile(files[1].id), 'provider')).toMatchObject({ status: 404 });
    expect(await failure(client.fileContent(files[1].id), 'provider')).toMatchObject({ status: 404 });
  });
}

function jobsContract(adapter: AdapterUnderTest) {
  it('jobs: creates a job and follows it to succeeded with a fine-tuned model', async () => {
    const created = await adapter.jobs.create();
    expect(created).toMatchObject({ id: expect.any(String), fineTunedModel: null, finishedAt: null });
    expect(await runToEnd(adapter.client(), created.id)).toEqual(adapter.jobs.statuses);
    expect(await adapter.client().getJob(created.id)).toMatchObject({
      id: created.id,
      status: 'succeeded',
      fineTunedModel: expect.any(String),
      finishedAt: expect.any(Number),
    });
  });

  it('jobs: lists newest first, page by page', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push((await adapter.jobs.create()).id);
      await tick();
    }
    const first = await adapter.client().listJobs({ limit: 2 });
    expect(first.data.map((j) => j.id)).toEqual([ids[2], ids[1]]);
    expect(first).toMatchObject({ hasMore: true, nextAfter: expect.any(String) });
    const second = await adapter.client().listJobs({ limit: 2, after: first.nextAfter! });
    expect(second).toMatchObject({ hasMore: false, data: [{ id: ids[0] }] });
  });

  it('jobs: events newest first, with ids stable from one read to the next, paged by id', async () => {
    const { id } = await adapter.jobs.create();
    await runToEnd(adapter.client(), id);
    const events = await adapter.client().listEvents(id, {});
    expect(events.data.length).toBeGreaterThan(2);
    const times = events.data.map((e) => e.createdAt);
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect((await adapter.client().listEvents(id, {})).data.map((e) => e.id)).toEqual(events.data.map((e) => e.id));
    const page = await adapter.client().listEvents(id, { limit: 1, after: events.data[0].id });
    expect(page).toMatchObject({ hasMore: true, data: [events.data[1]] });
  });

  const { refused = [], failed, findsHosted } = adapter.jobs;
  if (refused.length > 0)
    it.each(refused)('jobs: refuses %s with a 400 naming it, before any request', async (_what, input, dottedPath) => {
      const file = await adapter.files.upload(5, 'train.jsonl');
      const before = adapter.fake().state.requests.length;
      expect(await failure(adapter.jobs.create({ trainingFile: file.id, ...input }), 'invalid_request')).toMatchObject({
        status: 400,
        path: dottedPath.split('.'),
      });
      expect(adapter.fake().state.requests).toHaveLength(before);
    });

  if (failed)
    it("jobs: a job the provider failed reads failed, with the provider's reason", async () => {
      const { id } = await adapter.jobs.create();
      failed.fail(id, 'Training failed: out of memory');
      expect(await adapter.client().getJob(id)).toMatchObject({
        status: 'failed',
        error: { code: failed.code, message: 'Training failed: out of memory', param: null },
        finishedAt: expect.any(Number),
      });
      const event = failed.event?.('Training failed: out of memory');
      if (event) expect((await adapter.client().listEvents(id, {})).data[0]).toMatchObject({ level: 'error', message: event });
    });

  if (findsHosted)
    it('jobs: findJob finds a hosted job by its gateway job id, and no other', async () => {
      const gatewayJobId = randomUUID();
      expect(await adapter.client().findJob(gatewayJobId)).toBeUndefined();
      const job = await adapter.jobs.create({ gatewayJobId });
      await adapter.jobs.create();
      expect(await adapter.client().findJob(gatewayJobId)).toMatchObject({ id: job.id });
      expect(await adapter.client().findJob(randomUUID())).toBeUndefined();
    });

  const cancelledAs = adapter.jobs.cancelledAs;
  if (cancelledAs === null) {
    it('jobs: has no cancel, and says so before any request', async () => {
      const { id } = await adapter.jobs.create();
      const before = adapter.fake().state.requests.length;
      expect(adapter.client().supports('cancelJob')).toBe(false);
      expect(await failure(adapter.client().cancelJob(id), 'unsupported')).toMatchObject({ status: 400, code: 'unsupported_operation' });
      expect(adapter.fake().state.requests).toHaveLength(before);
    });
  } else {
    it('jobs: cancels a job, and relays the refusal to cancel it again', async () => {
      const { id } = await adapter.jobs.create();
      expect(await adapter.client().cancelJob(id)).toMatchObject({ id, status: cancelledAs });
      expect(await adapter.client().getJob(id)).toMatchObject({ status: 'cancelled', finishedAt: expect.any(Number) });
      const { code, message } = adapter.jobs.cancelRefusal ?? {};
      const refusal = await failure(adapter.client().cancelJob(id), 'provider');
      expect(refusal).toMatchObject({ status: 400, ...withCode(code), ...(message && { message: expect.stringMatching(message) }) });
    });
  }
}

function settingsContract(adapter: AdapterUnderTest) {
  const { required, hostile } = adapter.settings;
  it.each([required].flat())('settings: refuses a missing %s before any request, naming it', async (required) => {
    const err = await failure(adapter.client({ headers: { [required]: undefined } }).listJobs({}), 'invalid_request');
    expect(err).toMatchObject({ status: 400, param: required, code: 'missing_setting' });
    expect(adapter.fake().state.requests).toHaveLength(0);
  });

  if (hostile.length === 0) return;
  it.each(hostile)('settings: refuses %s: %j before any connection', async (header, value) => {
    const err = await failure(adapter.client({ headers: { [header]: value } }).listJobs({}), 'invalid_request');
    expect(err).toMatchObject({ status: 400, param: header, code: 'invalid_setting' });
    expect(adapter.fake().state.requests).toHaveLength(0);
  });
}

function errorsContract(adapter: AdapterUnderTest) {
  it("errors: a wrong credential is the provider's refusal, and never echoed", async () => {
    const { headers, secret, status, code } = adapter.wrongCredentials;
    const err = await failure(adapter.client({ headers }).listJobs({}), 'provider');
    expect(err).toMatchObject({ status, ...withCode(code) });
    expect(JSON.stringify({ message: err.message, param: err.param, code: err.code })).not.toContain(secret);
  });

  it("errors: an unknown job is the provider's 404", async () => {
    const { id, code } = adapter.jobs.unknown;
    expect(await failure(adapter.client().getJob(id), 'provider')).toMatchObject({ status: 404, type: 'provider_error', ...withCode(code) });
  });

  it('errors: a read answered 429 is retried and succeeds, or a 429 once the retries are spent; a 5xx is a 502 after the bounded retries', async () => {
    adapter.fake().failNext('GET', adapter.jobs.listPath, 429, { times: 2, retryAfter: '0' });
    await expect(adapter.client().listJobs({})).resolves.toMatchObject({ data: [] });
    expect(requestsTo(adapter, 'GET', adapter.jobs.listPath)).toHaveLength(3);
    adapter.fake().failNext('GET', adapter.jobs.listPath, 503, { times: 5 });
    expect(await failure(adapter.client().listJobs({}), 'provider')).toMatchObject({ status: 502 });
    expect(requestsTo(adapter, 'GET', adapter.jobs.listPath)).toHaveLength(6); // first try + 2 retries
    adapter.fake().failNext('GET', adapter.jobs.listPath, 429, { times: 3, retryAfter: '0' });
    expect(await failure(adapter.client().listJobs({}), 'provider')).toMatchObject({ status: 429, ...withCode(adapter.throttledCode) });
    expect(requestsTo(adapter, 'GET', adapter.jobs.listPath)).toHaveLength(9);
  });

  if (adapter.jobs.createRetried) {
    it('errors: a create answered 500 is retried with its idempotency token, and makes one job', async () => {
      const file = await adapter.files.upload(5, 'train.jsonl');
      adapter.fake().failNext('POST', adapter.jobs.createPath, 500);
      const job = await adapter.jobs.create({ trainingFile: file.id, gatewayJobId: randomUUID() });
      expect(requestsTo(adapter, 'POST', adapter.jobs.createPath)).toHaveLength(2);
      expect((await adapter.client().listJobs({})).data.map((j) => j.id)).toEqual([job.id]);
    });
  } else {
    it('errors: a create answered 500 is a 502 and is not retried', async () => {
      const file = await adapter.files.upload(5, 'train.jsonl');
      adapter.fake().failNext('POST', adapter.jobs.createPath, 500);
      const err = await failure(adapter.jobs.create({ trainingFile: file.id }), 'provider');
      expect(err.status).toBe(502);
      expect(requestsTo(adapter, 'POST', adapter.jobs.createPath)).toHaveLength(1);
    });
  }

  it('errors: a long Retry-After is capped at maxRetryWaitMs', async () => {
    adapter.fake().failNext('GET', adapter.jobs.listPath, 429, { retryAfter: '3600' });
    const started = Date.now();
    await expect(adapter.client({ http: { maxRetryWaitMs: 20 } }).listJobs({})).resolves.toMatchObject({ data: [] });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  if (adapter.files.uploadPut) {
    it('errors: an upload answered 500 is put again under the same key, and stored once', async () => {
      adapter.fake().failNext('PUT', adapter.files.uploadPath, 500);
      const file = await adapter.files.upload(5, 'train.jsonl');
      expect(new Set(requestsTo(adapter, 'PUT', adapter.files.uploadPath).map((r) => r.path))).toEqual(new Set([expect.stringContaining(file.filename)]));
      expect(requestsTo(adapter, 'PUT', adapter.files.uploadPath)).toHaveLength(2);
      expect((await adapter.client().listFiles({})).data.map((f) => f.id)).toEqual([file.id]);
    });
  } else {
    it('errors: a streamed upload answered 500 is a 502 and is not retried', async () => {
      adapter.fake().failNext('POST', adapter.files.uploadPath, 500);
      expect(await failure(adapter.files.upload(5, 'train.jsonl'), 'provider')).toMatchObject({ status: 502 });
      expect(requestsTo(adapter, 'POST', adapter.files.uploadPath)).toHaveLength(1);
    });
  }

  it('errors: a time-out is a 504, not retried', async () => {
    adapter.fake().delayNext('GET', adapter.jobs.listPath, 1_000);
    const err = await failure(adapter.client({ http: { timeoutMs: 150 } }).listJobs({}), 'provider');
    expect(err).toMatchObject({ status: 504, message: expect.stringMatching(/ did not answer in time$/) });
    expect(requestsTo(adapter, 'GET', adapter.jobs.listPath).length).toBeLessThanOrEqual(1); // not retried (under load the fake may not have logged it yet)
  });
}

function chatContract(adapter: AdapterUnderTest, chat: NonNullable<AdapterUnderTest['chat']>) {
  const messages = [{ role: 'user' as const, content: 'Say hi' }];
  const ask = (stream: boolean, signal = new AbortController().signal) =>
    adapter.client().chat({ model: chat.model, body: { model: chat.model, messages, stream }, hosted: false, signal });
  const reply = `Answer from ${chat.model}: Say hi`;

  it('chat: answers a completion with its usage', async () => {
    const answer = await ask(false);
    if (answer.stream) throw new Error('expected a whole answer');
    expect(answer.completion.choices).toMatchObject([{ index: 0, content: reply, finishReason: 'stop' }]);
    expect(answer.completion.usage).toMatchObject({ totalTokens: expect.any(Number) });
  });

  it('chat: streams deltas as they come, then the finish reason and the usage', async () => {
    const answer = await ask(true);
    if (!answer.stream) throw new Error('expected a stream');
    const chunks: ChatChunk[] = [];
    for await (const chunk of answer.chunks) chunks.push(chunk);
    expect(answer.model).toBe(chat.model);
    expect(chunks.at(-1)).toEqual({ type: 'usage', usage: expect.objectContaining({ totalTokens: expect.any(Number) }) });
    if (answer.relayed) return expectRelayedEvents(chunks.slice(0, -1), chat.model, reply);
    const deltas = chunks.flatMap((c) => (c.type === 'delta' ? [c.content ?? ''] : []));
    expect(deltas.length).toBeGreaterThan(2);
    expect(deltas.join('')).toBe(reply);
    expect(chunks.at(-2)).toMatchObject({ type: 'finish', finishReason: 'stop' });
    // A one-choice stream may leave the index out (Bedrock's): absent means 0.
    expect([0, undefined]).toContain((chunks.at(-2) as { index?: number }).index);
  });

  it("chat: ends the provider's stream when the caller goes away", async () => {
    const controller = new AbortController();
    const answer = await ask(true, controller.signal);
    if (!answer.stream) throw new Error('expected a stream');
    const iterator = answer.chunks[Symbol.asyncIterator]();
    await iterator.next();
    controller.abort();
    await expect(iterator.next()).rejects.toBeDefined();
    await eventually(() => chat.abandonedStreams() === 1, 5_000, 20, 'the fake to see the stream abandoned');
  });

  it("chat: ends the provider's stream when the consumer stops reading", async () => {
    const answer = await ask(true);
    if (!answer.stream) throw new Error('expected a stream');
    for await (const chunk of answer.chunks) if (chunk.type === 'delta' || chunk.type === 'events') break;
    await eventually(() => chat.abandonedStreams() === 1, 5_000, 20, 'the fake to see the stream abandoned');
  });
}

/**
 * A relayed stream (OpenAI's wire format): OpenAI's own chunks as server-sent events, each with the
 * model the caller named and without usage (which comes after them as the contract's chunk), the
 * text in deltas, the last choice chunk finishing with `stop`.
 */
function expectRelayedEvents(chunks: ChatChunk[], model: string, reply: string) {
  const text = chunks.map((c) => (c.type === 'events' ? c.text : `unexpected ${c.type} chunk`)).join('');
  const events = text.split('\n\n').filter(Boolean);
  expect(events.every((e) => e.startsWith('data: '))).toBe(true);
  const parsed = events.map(
    (e) => JSON.parse(e.slice('data: '.length)) as { model: string; usage?: unknown; choices: { delta: { content?: string }; finish_reason: string | null }[] },
  );
  expect(parsed.every((c) => c.model === model && c.usage === undefined)).toBe(true);
  const deltas = parsed.flatMap((c) => c.choices.map((choice) => choice.delta.content ?? ''));
  expect(deltas.filter(Boolean).length).toBeGreaterThan(2);
  expect(deltas.join('')).toBe(reply);
  expect(parsed.at(-1)?.choices[0].finish_reason).toBe('stop');
}
