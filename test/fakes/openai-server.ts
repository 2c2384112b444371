/**
 * A fake OpenAI API for tests: files, fine-tuning, chat completions and batches (openai-batches.ts), on 127.0.0.1 over real HTTP,
 * speaking OpenAI's wire protocol (snake_case objects, `{object: "list", data, has_more}` lists,
 * `{error: {...}}` bodies).
 *
 * Jobs advance one lifecycle step per GET of the job (validating_files → queued → running →
 * succeeded), so a test drives a job to completion by polling, exactly as the gateway's monitor does.
 * Chat answers a succeeded job's `fine_tuned_model` or a base model, plain or streamed chunk by chunk.
 * `failNext` / `delayNext` inject provider failures and slowness for retry and timeout tests.
 */
import { randomBytes } from 'node:crypto';
import type http from 'node:http';
import { chatCompletion, chatCompletionChunks, parseChatRequest, streamChatCompletion, writeEvents } from './chat';
import { fakeReply } from './fake-model';
import { fakeBatches } from './openai-batches';
import { batchByIdReply, cursorPage, FakeHttpError, readJsonObject, readMultipart, startFakeServer, type FakeReply, type RecordedRequest } from './kit';

export interface FakeFile {
  id: string;
  object: 'file';
  bytes: number;
  created_at: number;
  filename: string;
  purpose: string;
  status: 'processed';
  /** Kept so tests can check what arrived; never sent back in file objects. */
  content: Buffer;
}

export interface FakeJob {
  id: string;
  object: 'fine_tuning.job';
  status: 'validating_files' | 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';
  model: string;
  error: { code: string; message: string; param: string | null } | null;
  fine_tuned_model: string | null;
  training_file: string;
  validation_file: string | null;
  suffix: string | null;
  trained_tokens: number | null;
  created_at: number;
  finished_at: number | null;
  estimated_finish: number | null;
  seed: number;
  hyperparameters: Record<string, unknown>;
  method: Record<string, unknown>;
  metadata: Record<string, string> | null;
  result_files: string[];
  organization_id: string;
}

export interface FakeEvent {
  id: string;
  object: 'fine_tuning.job.event';
  created_at: number;
  level: 'info' | 'warn' | 'error';
  message: string;
  type: 'message' | 'metrics';
  data: Record<string, unknown>;
}

export interface FakeCheckpoint {
  id: string;
  object: 'fine_tuning.job.checkpoint';
  created_at: number;
  fine_tuned_model_checkpoint: string;
  step_number: number;
  metrics: Record<string, number>;
  fine_tuning_job_id: string;
}

export interface FakeChatRequest {
  model: string;
  /** The body as received. */
  body: Record<string, unknown>;
  headers: http.IncomingHttpHeaders;
}

export interface FakeOpenAIOptions {
  /** The key `Authorization: Bearer …` must carry. */
  apiKey?: string;
  /** Lifecycle steps a job advances per GET of it. */
  stepsPerPoll?: number;
  /** Base models chat answers besides succeeded jobs' `fine_tuned_model`s (default OPENAI_CHAT_MODELS). */
  chatModels?: string[];
  /** Pause between streamed chunks (default 0), so a test can disconnect midway. */
  streamDelayMs?: number;
  /** Streamed tool-call arguments in pieces of this many characters (default: in thirds); the benchmarks stream them as long as a text answer. */
  argumentPieceChars?: number;
  /** Batch requests run per GET of an in-progress batch (default: all). */
  batchLinesPerPoll?: number;
}

export const OPENAI_CHAT_MODELS = ['gpt-4o-mini', 'gpt-4o-mini-2024-07-18', 'gpt-4o', 'gpt-4.1-mini'];

const NEXT: Partial<Record<FakeJob['status'], FakeJob['status']>> = {
  validating_files: 'queued',
  queued: 'running',
  running: 'succeeded',
};
const TRANSITION_MESSAGES: Record<string, string> = {
  queued: 'Files validated, moving job to queued state',
  running: 'Fine-tuning job started',
  succeeded: 'The job has successfully completed',
};
const TERMINAL = new Set(['succeeded', 'failed', 'cancelled']);
const DEFAULT_JOB_FAILURE = { code: 'invalid_training_file', message: 'The job failed due to an invalid training file.', param: 'training_file' };

const now = () => Math.floor(Date.now() / 1000);
const newId = (prefix: string) => `${prefix}-${randomBytes(12).toString('hex')}`;

/** OpenAI's `{error: {message, type, param, code}}`, as FakeHttpError details. */
class HttpError extends FakeHttpError {
  constructor(status: number, message: string, param: string | null = null, code: string | null = null, type = 'invalid_request_error') {
    super(status, message, { param, code, type });
  }
}

const renderError = (e: FakeHttpError) => ({
  status: e.status,
  body: { error: { message: e.message, type: e.details.type ?? 'invalid_request_error', param: e.details.param ?? null, code: e.details.code ?? null } },
});

export async function startFakeOpenAI(opts: FakeOpenAIOptions = {}) {
  const apiKey = opts.apiKey ?? 'sk-test-fake';
  const stepsPerPoll = opts.stepsPerPoll ?? 1;
  const chatModels = new Set(opts.chatModels ?? OPENAI_CHAT_MODELS);
  let streamDelayMs = opts.streamDelayMs ?? 0;
  let streamFailure: { afterChunks: number; message: string } | null = null;
  const state = {
    files: new Map<string, FakeFile>(),
    jobs: new Map<string, FakeJob>(),
    events: new Map<string, FakeEvent[]>(), // per job, oldest first
    checkpoints: new Map<string, FakeCheckpoint[]>(), // per job, oldest first
    createJobCalls: 0,
    /** Every chat completion request that named a servable model, in arrival order. */
    chatRequests: [] as FakeChatRequest[],
    /** Streams whose client went away before `[DONE]`. */
    abandonedStreams: 0,
    /** Every request the fake received (filled by the kit). */
    requests: [] as RecordedRequest[],
  };

  /** Jobs `failJob` marked: their next step is to `failed` with this error. */
  const failures = new Map<string, NonNullable<FakeJob['error']>>();

  const addEvent = (job: FakeJob, message: string, level: FakeEvent['level'] = 'info') =>
    state.events.get(job.id)!.push({
      id: newId('ftevent'),
      object: 'fine_tuning.job.event',
      created_at: now(),
      level,
      message,
      type: 'message',
      data: {},
    });

  function advance(job: FakeJob) {
    const failure = failures.get(job.id);
    if (failure && !TERMINAL.has(job.status)) return fail(job, failure);
    const next = NEXT[job.status];
    if (!next) return;
    job.status = next;
    if (next === 'running') job.estimated_finish = now() + 60;
    if (next === 'succeeded') succeed(job);
    addEvent(job, TRANSITION_MESSAGES[next]);
  }

  function fail(job: FakeJob, error: NonNullable<FakeJob['error']>) {
    failures.delete(job.id);
    Object.assign(job, { status: 'failed', error, finished_at: now(), estimated_finish: null });
    addEvent(job, error.message, 'error');
  }

  function succeed(job: FakeJob) {
    job.fine_tuned_model = `ft:${job.model}:${job.suffix ?? 'fake'}:${job.id}`;
    job.trained_tokens = Math.ceil(state.files.get(job.training_file)!.bytes / 4) * 3;
    job.finished_at = now();
    job.estimated_finish = null;
    const results = Buffer.from('step,train_loss\n10,0.9\n20,0.6\n30,0.4\n');
    const resultFile = storeFile('step_metrics.csv', 'fine-tune-results', results);
    job.result_files = [resultFile.id];
    state.checkpoints.set(
      job.id,
      [10, 20, 30].map((step, i) => ({
        id: newId('ftckpt'),
        object: 'fine_tuning.job.checkpoint' as const,
        created_at: now(),
        fine_tuned_model_checkpoint: `${job.fine_tuned_model}:ckpt-step-${step}`,
        step_number: step,
        metrics: { step, train_loss: 0.9 - i * 0.25, train_mean_token_accuracy: 0.7 + i * 0.1 },
        fine_tuning_job_id: job.id,
      })),
    );
  }

  function storeFile(filename: string, purpose: string, content: Buffer): FakeFile {
    const file: FakeFile = {
      id: newId('file'),
      object: 'file',
      bytes: content.length,
      created_at: now(),
      filename,
      purpose,
      status: 'processed',
      content,
    };
    state.files.set(file.id, file);
    return file;
  }

  const fileObject = ({ content: _content, ...wire }: FakeFile) => wire;

  const batches = fakeBatches({
    files: { content: (id) => state.files.get(id), store: storeFile },
    servable: (model) => servable(model),
    endpoints: ['/v1/chat/completions'],
    error: (status, message, param, code) => new HttpError(status, message, param ?? null, code ?? null),
    linesPerPoll: opts.batchLinesPerPoll,
  });

  function findJob(id: string): FakeJob {
    const job = state.jobs.get(id);
    if (!job) throw new HttpError(404, `Could not find fine-tuning job: ${id}`, 'id', 'fine_tune_not_found');
    return job;
  }

  const page = <T extends { id: string }>(items: T[], query: URLSearchParams, defaultLimit: number) =>
    cursorPage(items, query, defaultLimit, () => new HttpError(400, 'Invalid limit', 'limit'));

  function findFile(id: string): FakeFile {
    const file = state.files.get(id);
    if (!file) throw new HttpError(404, `No such File object: ${id}`, 'id');
    return file;
  }

  /** `GET /v1/files`: filtered by purpose, newest first unless `order=asc`, with OpenAI's cursor fields. */
  function listFiles(query: URLSearchParams) {
    const order = query.get('order') ?? 'desc';
    if (order !== 'asc' && order !== 'desc') {
      throw new HttpError(400, `Invalid value: '${order}'. Supported values are: 'asc' and 'desc'.`, 'order', 'invalid_value');
    }
    const purpose = query.get('purpose');
    const files = [...state.files.values()].filter((f) => !purpose || f.purpose === purpose).map(fileObject);
    const list = page(order === 'asc' ? files : files.reverse(), query, 10_000);
    return { ...list, first_id: list.data[0]?.id ?? null, last_id: list.data.at(-1)?.id ?? null };
  }

  /** A model chat can answer: a base model, or the `fine_tuned_model` of a succeeded job. */
  const servable = (model: string) => chatModels.has(model) || [...state.jobs.values()].some((j) => j.status === 'succeeded' && j.fine_tuned_model === model);

  async function chat(req: http.IncomingMessage, res: http.ServerResponse): Promise<FakeReply | void> {
    const request = parseChatRequest(await readJson(req), (message, param, code) => new HttpError(400, message, param, code));
    const { model } = request;
    if (!model) throw new HttpError(400, "Missing required parameter: 'model'.", 'model', 'missing_required_parameter');
    if (!servable(model)) throw new HttpError(404, `The model \`${model}\` does not exist or you do not have access to it.`, null, 'model_not_found');
    state.chatRequests.push({ model, body: request.body, headers: req.headers });
    const answer = fakeReply(model, request.conversation);
    if (!request.stream)
      return { status: 200, body: { ...chatCompletion(model, answer, request.shape), service_tier: 'default', system_fingerprint: 'fp_fake' } };
    const options = {
      delayMs: streamDelayMs,
      includeUsage: request.includeUsage,
      onAbandoned: () => state.abandonedStreams++,
      argumentPieceChars: opts.argumentPieceChars,
    };
    const failure = streamFailure;
    streamFailure = null;
    if (!failure) return streamChatCompletion(res, model, answer, options, request.shape);
    // OpenAI reports a failure inside an open stream as an event holding its error object.
    const error = { error: { message: failure.message, type: 'server_error', param: null, code: null } };
    const events = [...chatCompletionChunks(model, answer).slice(0, failure.afterChunks), error].map((e) => JSON.stringify(e));
    await writeEvents(res, events, options);
  }

  function createJob(body: Record<string, unknown>): FakeJob {
    state.createJobCalls++;
    if (typeof body.model !== 'string') throw new HttpError(400, "Missing required parameter: 'model'.", 'model');
    const mustExist = (param: 'training_file' | 'validation_file') => {
      const id = body[param];
      if (typeof id !== 'string' || !state.files.has(id)) {
        throw new HttpError(400, `invalid ${param}: ${String(id)}`, param);
      }
    };
    mustExist('training_file');
    if (body.validation_file != null) mustExist('validation_file');
    const suffix = typeof body.suffix === 'string' ? body.suffix : null;
    const hyperparameters = (body.hyperparameters as Record<string, unknown>) ?? {
      n_epochs: 'auto',
      batch_size: 'auto',
      learning_rate_multiplier: 'auto',
    };
    const job: FakeJob = {
      id: newId('ftjob'),
      object: 'fine_tuning.job',
      status: 'validating_files',
      model: body.model,
      fine_tuned_model: null,
      trained_tokens: null,
      error: null,
      created_at: now(),
      finished_at: null,
      estimated_finish: null,
      hyperparameters,
      organization_id: 'org-fake',
      result_files: [],
      training_file: body.training_file as string,
      validation_file: (body.validation_file as string) ?? null,
      seed: typeof body.seed === 'number' ? body.seed : 42,
      method: (body.method as Record<string, unknown>) ?? { type: 'supervised', supervised: { hyperparameters } },
      suffix,
      metadata: (body.metadata as Record<string, string>) ?? null,
    };
    state.jobs.set(job.id, job);
    state.events.set(job.id, []);
    state.checkpoints.set(job.id, []);
    addEvent(job, `Created fine-tuning job: ${job.id}`);
    addEvent(job, `Validating training file: ${job.training_file}`);
    return job;
  }

  async function route(req: http.IncomingMessage, res: http.ServerResponse, path: string, query: URLSearchParams): Promise<FakeReply | void> {
    const method = req.method ?? 'GET';
    const ok = (body: unknown): FakeReply => ({ status: 200, body });
    if (path === '/v1/files') {
      if (method === 'POST') return ok(fileObject(await receiveUpload(req)));
      if (method === 'GET') return ok(listFiles(query));
    }
    let m = /^\/v1\/files\/([^/]+)(\/content)?$/.exec(path);
    if (m) {
      const file = findFile(decodeURIComponent(m[1]));
      const action = `${method} ${m[2] ?? ''}`;
      if (action === 'GET ') return ok(fileObject(file));
      if (action === 'GET /content') return { status: 200, body: file.content };
      if (action === 'DELETE ') {
        state.files.delete(file.id);
        return ok({ id: file.id, object: 'file', deleted: true });
      }
    }
    if (method === 'POST' && path === '/v1/chat/completions') return chat(req, res);
    if (method === 'GET' && path === '/v1/models') return ok(listModels());
    if (path === '/v1/batches') {
      if (method === 'POST') return ok(batches.create(await readJson(req)));
      if (method === 'GET') return ok(batches.list(query));
    }
    const batchReply = batchByIdReply(method, path, '/v1', () => batches);
    if (batchReply) return batchReply;
    if (path === '/v1/fine_tuning/jobs') {
      if (method === 'POST') return ok(createJob(await readJson(req)));
      if (method === 'GET') return ok(page([...state.jobs.values()].reverse(), query, 20));
    }
    m = /^\/v1\/fine_tuning\/jobs\/([^/]+)(\/cancel|\/events|\/checkpoints)?$/.exec(path);
    if (m) {
      const job = findJob(decodeURIComponent(m[1]));
      const action = `${method} ${m[2] ?? ''}`;
      if (action === 'GET ') {
        for (let i = 0; i < stepsPerPoll; i++) advance(job);
        return ok(job);
      }
      if (action === 'POST /cancel') {
        if (TERMINAL.has(job.status)) throw new HttpError(400, `Job has already completed: ${job.status}`, null);
        job.status = 'cancelled';
        job.finished_at = now();
        addEvent(job, 'Fine-tuning job cancelled');
        return ok(job);
      }
      if (action === 'GET /events') return ok(page([...state.events.get(job.id)!].reverse(), query, 20));
      if (action === 'GET /checkpoints') {
        const list = page([...state.checkpoints.get(job.id)!].reverse(), query, 10);
        return ok({ ...list, first_id: list.data[0]?.id ?? null, last_id: list.data.at(-1)?.id ?? null });
      }
    }
    throw new HttpError(404, `Invalid URL (${method} ${path})`, null);
  }

  /** `GET /v1/models`: the base models chat answers (owned by `system`), then the account's fine-tuned ones. */
  function listModels() {
    const base = [...chatModels].map((id) => ({ id, object: 'model', created: 1_700_000_000, owned_by: 'system' }));
    const tuned = [...state.jobs.values()].flatMap((j) =>
      j.status === 'succeeded' && j.fine_tuned_model
        ? [{ id: j.fine_tuned_model, object: 'model', created: j.finished_at ?? j.created_at, owned_by: j.organization_id }]
        : [],
    );
    return { object: 'list', data: [...base, ...tuned] };
  }

  async function receiveUpload(req: http.IncomingMessage): Promise<FakeFile> {
    const { fields, files } = await readMultipart(req, (message) => new HttpError(400, message, null));
    if (!files.file) throw new HttpError(400, "Missing required parameter: 'file'.", 'file');
    if (!fields.purpose) throw new HttpError(400, "Missing required parameter: 'purpose'.", 'purpose');
    return storeFile(files.file.filename, fields.purpose, files.file.content);
  }

  const readJson = (req: http.IncomingMessage) => readJsonObject(req, () => new HttpError(400, 'We could not parse the JSON body of your request.', null));

  const server = await startFakeServer({
    renderError,
    injectedError: (status, o) =>
      status === 429
        ? new HttpError(429, o.message ?? 'Rate limit reached', null, 'rate_limit_exceeded', 'requests')
        : new HttpError(status, o.message ?? 'The server had an error', null, null, 'server_error'),
    async route(req, res, url) {
      const auth = req.headers.authorization ?? '';
      if (auth !== `Bearer ${apiKey}`) {
        req.resume();
        const given = auth.replace(/^Bearer /, '');
        const masked = given.length > 8 ? `${given.slice(0, 4)}****${given.slice(-4)}` : '****';
        throw new HttpError(401, `Incorrect API key provided: ${masked}.`, null, 'invalid_api_key');
      }
      return route(req, res, url.pathname, url.searchParams);
    },
  });
  state.requests = server.requests;

  return {
    url: `${server.origin}/v1`,
    state,
    /** The next `times` (default 1) requests matching method and path prefix (e.g. `/v1/fine_tuning/jobs`) fail. */
    failNext: server.failNext,
    /** The next `times` (default 1) matching requests are answered only after `ms`. */
    delayNext: server.delayNext,
    /** The next matching successful JSON answer goes through `reshape` (a field dropped or retyped). */
    reshapeNext: server.reshapeNext,
    /** Drops the failures and delays injected that no request has taken yet, and answers the requests held back now. */
    clearInjections: server.clearInjections,
    /** The Batch API (`/v1/batches`): its batches, and hooks to fail requests, expire or fail a batch. */
    batches,
    /** The job's next lifecycle step (its next GET) ends it `failed` with `error` instead. */
    failJob(id: string, error: NonNullable<FakeJob['error']> = DEFAULT_JOB_FAILURE) {
      failures.set(findJob(id).id, error);
    },
    /** Pause between streamed chat chunks from now on. */
    setStreamDelay(ms: number) {
      streamDelayMs = ms;
    },
    /** The next streamed answer sends `afterChunks` chunks, then an error event with `message` (no `[DONE]`). */
    failNextStream(afterChunks: number, message = 'The server had an error while processing your request.') {
      streamFailure = { afterChunks, message };
    },
    close: server.close,
  };
}

export type FakeOpenAI = Awaited<ReturnType<typeof startFakeOpenAI>>;
