/**
 * A fake OpenAI API for tests: files and fine-tuning, on 127.0.0.1 over real HTTP, speaking OpenAI's
 * wire protocol (snake_case objects, `{object: "list", data, has_more}` lists, `{error: {...}}` bodies).
 *
 * Jobs advance one lifecycle step per GET of the job (validating_files → queued → running →
 * succeeded), so a test drives a job to completion by polling, exactly as the gateway's monitor does.
 * `failNext` / `delayNext` inject provider failures and slowness for retry and timeout tests.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import busboy from 'busboy';

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

export interface FakeOpenAIOptions {
  /** The key `Authorization: Bearer …` must carry. */
  apiKey?: string;
  /** Lifecycle steps a job advances per GET of it. */
  stepsPerPoll?: number;
}

export interface FailOptions {
  /** How many matching requests fail (default 1). */
  times?: number;
  /** Sent as the `Retry-After` header. */
  retryAfter?: string;
  /** Replaces the default error message. */
  message?: string;
}

/** A pending failNext (has `status`) or delayNext (has `delayMs`). */
interface Injection extends FailOptions {
  method: string;
  pathPrefix: string;
  times: number;
  status?: number;
  delayMs?: number;
}

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

const now = () => Math.floor(Date.now() / 1000);
const newId = (prefix: string) => `${prefix}-${randomBytes(12).toString('hex')}`;

/** Thrown by route handlers; becomes OpenAI's `{error: {message, type, param, code}}` body. */
class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly param: string | null = null,
    readonly code: string | null = null,
    readonly type = 'invalid_request_error',
  ) {
    super(message);
  }
}

export async function startFakeOpenAI(opts: FakeOpenAIOptions = {}) {
  const apiKey = opts.apiKey ?? 'sk-test-fake';
  const stepsPerPoll = opts.stepsPerPoll ?? 1;
  const state = {
    files: new Map<string, FakeFile>(),
    jobs: new Map<string, FakeJob>(),
    events: new Map<string, FakeEvent[]>(), // per job, oldest first
    checkpoints: new Map<string, FakeCheckpoint[]>(), // per job, oldest first
    createJobCalls: 0,
    requests: [] as Array<{ method: string; path: string; headers: http.IncomingHttpHeaders }>,
  };
  const injections: Injection[] = [];
  const timers = new Set<NodeJS.Timeout>();

  const addEvent = (job: FakeJob, message: string) =>
    state.events.get(job.id)!.push({
      id: newId('ftevent'),
      object: 'fine_tuning.job.event',
      created_at: now(),
      level: 'info',
      message,
      type: 'message',
      data: {},
    });

  function advance(job: FakeJob) {
    const next = NEXT[job.status];
    if (!next) return;
    job.status = next;
    if (next === 'running') job.estimated_finish = now() + 60;
    if (next === 'succeeded') succeed(job);
    addEvent(job, TRANSITION_MESSAGES[next]);
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

  function findJob(id: string): FakeJob {
    const job = state.jobs.get(id);
    if (!job) throw new HttpError(404, `Could not find fine-tuning job: ${id}`, 'id', 'fine_tune_not_found');
    return job;
  }

  /** OpenAI's cursor paging over a newest-first list: items after the `after` id, `limit` of them. */
  function page<T extends { id: string }>(newestFirst: T[], query: URLSearchParams, defaultLimit: number) {
    const limit = query.has('limit') ? Number(query.get('limit')) : defaultLimit;
    if (!Number.isInteger(limit) || limit < 1) throw new HttpError(400, 'Invalid limit', 'limit');
    const after = query.get('after');
    const start = after ? newestFirst.findIndex((item) => item.id === after) + 1 : 0;
    const data = after && start === 0 ? [] : newestFirst.slice(start, start + limit);
    return { object: 'list', data, has_more: start + data.length < newestFirst.length && data.length > 0 };
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

  async function route(req: http.IncomingMessage, path: string, query: URLSearchParams): Promise<unknown> {
    const method = req.method ?? 'GET';
    if (method === 'POST' && path === '/v1/files') return fileObject(await receiveUpload(req));
    let m = /^\/v1\/files\/([^/]+)$/.exec(path);
    if (method === 'GET' && m) {
      const file = state.files.get(decodeURIComponent(m[1]));
      if (!file) throw new HttpError(404, `No such File object: ${m[1]}`, 'id');
      return fileObject(file);
    }
    if (path === '/v1/fine_tuning/jobs') {
      if (method === 'POST') return createJob(await readJson(req));
      if (method === 'GET') return page([...state.jobs.values()].reverse(), query, 20);
    }
    m = /^\/v1\/fine_tuning\/jobs\/([^/]+)(\/cancel|\/events|\/checkpoints)?$/.exec(path);
    if (m) {
      const job = findJob(decodeURIComponent(m[1]));
      const action = `${method} ${m[2] ?? ''}`;
      if (action === 'GET ') {
        for (let i = 0; i < stepsPerPoll; i++) advance(job);
        return job;
      }
      if (action === 'POST /cancel') {
        if (TERMINAL.has(job.status)) throw new HttpError(400, `Job has already completed: ${job.status}`, null);
        job.status = 'cancelled';
        job.finished_at = now();
        addEvent(job, 'Fine-tuning job cancelled');
        return job;
      }
      if (action === 'GET /events') return page([...state.events.get(job.id)!].reverse(), query, 20);
      if (action === 'GET /checkpoints') {
        const list = page([...state.checkpoints.get(job.id)!].reverse(), query, 10);
        return { ...list, first_id: list.data[0]?.id ?? null, last_id: list.data.at(-1)?.id ?? null };
      }
    }
    throw new HttpError(404, `Invalid URL (${method} ${path})`, null);
  }

  function receiveUpload(req: http.IncomingMessage): Promise<FakeFile> {
    return new Promise((resolve, reject) => {
      let parser: busboy.Busboy;
      try {
        parser = busboy({ headers: req.headers, defParamCharset: 'utf8' });
      } catch {
        return reject(new HttpError(400, 'Expected multipart/form-data', null));
      }
      const fields: Record<string, string> = {};
      let upload: { filename: string; chunks: Buffer[] } | undefined;
      parser.on('field', (name, value) => (fields[name] = value));
      parser.on('file', (name, stream, info) => {
        if (name !== 'file') return void stream.resume();
        const current = { filename: info.filename, chunks: [] as Buffer[] };
        upload = current;
        stream.on('data', (chunk: Buffer) => current.chunks.push(chunk));
      });
      parser.on('error', () => reject(new HttpError(400, 'Malformed multipart body', null)));
      parser.on('close', () => {
        if (!upload) return reject(new HttpError(400, "Missing required parameter: 'file'.", 'file'));
        if (!fields.purpose) return reject(new HttpError(400, "Missing required parameter: 'purpose'.", 'purpose'));
        resolve(storeFile(upload.filename, fields.purpose, Buffer.concat(upload.chunks)));
      });
      req.pipe(parser);
    });
  }

  async function readJson(req: http.IncomingMessage): Promise<Record<string, unknown>> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      if (body && typeof body === 'object' && !Array.isArray(body)) return body;
    } catch {
      // fall through to the 400 below
    }
    throw new HttpError(400, 'We could not parse the JSON body of your request.', null);
  }

  function takeInjection(method: string, path: string, kind: 'fail' | 'delay'): Injection | undefined {
    const found = injections.find(
      (i) => i.method === method && path.startsWith(i.pathPrefix) && (kind === 'delay') === (i.delayMs !== undefined),
    );
    if (found && --found.times <= 0) injections.splice(injections.indexOf(found), 1);
    return found;
  }

  function send(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
    if (res.destroyed) return;
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  }

  const sendError = (res: http.ServerResponse, e: HttpError, headers?: Record<string, string>) =>
    send(res, e.status, { error: { message: e.message, type: e.type, param: e.param, code: e.code } }, headers);

  async function handle(req: http.IncomingMessage, res: http.ServerResponse) {
    const url = new URL(req.url ?? '/', 'http://fake');
    const method = req.method ?? 'GET';
    state.requests.push({ method, path: url.pathname, headers: req.headers });

    const delay = takeInjection(method, url.pathname, 'delay');
    if (delay) await new Promise<void>((r) => timers.add(setTimeout(r, delay.delayMs)));

    const failure = takeInjection(method, url.pathname, 'fail');
    if (failure) {
      req.resume(); // drain the body so the client is not left mid-upload
      const status = failure.status!;
      const [type, code] = status === 429 ? ['requests', 'rate_limit_exceeded'] : ['server_error', null];
      const message = failure.message ?? (status === 429 ? 'Rate limit reached' : 'The server had an error');
      const headers: Record<string, string> = {};
      if (failure.retryAfter !== undefined) headers['retry-after'] = failure.retryAfter;
      return sendError(res, new HttpError(status, message, null, code, type), headers);
    }

    const auth = req.headers.authorization ?? '';
    if (auth !== `Bearer ${apiKey}`) {
      req.resume();
      const given = auth.replace(/^Bearer /, '');
      const masked = given.length > 8 ? `${given.slice(0, 4)}****${given.slice(-4)}` : '****';
      return sendError(res, new HttpError(401, `Incorrect API key provided: ${masked}.`, null, 'invalid_api_key'));
    }

    try {
      send(res, 200, await route(req, url.pathname, url.searchParams));
    } catch (e) {
      req.resume();
      const unexpected = new HttpError(500, 'The server had an error', null, null, 'server_error');
      sendError(res, e instanceof HttpError ? e : unexpected);
    }
  }

  const server = http.createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    state,
    /** The next `times` (default 1) requests matching method and path prefix (e.g. `/v1/fine_tuning/jobs`) fail. */
    failNext(method: string, pathPrefix: string, status: number, o: FailOptions = {}) {
      injections.push({ ...o, method: method.toUpperCase(), pathPrefix, status, times: o.times ?? 1 });
    },
    /** The next `times` (default 1) matching requests are answered only after `ms`. */
    delayNext(method: string, pathPrefix: string, ms: number, times = 1) {
      injections.push({ method: method.toUpperCase(), pathPrefix, delayMs: ms, times });
    },
    async close() {
      for (const t of timers) clearTimeout(t);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export type FakeOpenAI = Awaited<ReturnType<typeof startFakeOpenAI>>;
