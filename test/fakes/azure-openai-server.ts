/**
 * A fake Azure OpenAI data plane for tests, on 127.0.0.1 over real HTTP: files, fine-tuning and chat
 * on deployments, as Azure's REST spec 2024-10-21 ("authoring" and "inference") describes them.
 *
 * What it holds a client to, as Azure does:
 * - Addressing: `/{resource}/openai/...` for each known resource (the gateway's base URL template
 *   `http://127.0.0.1:<port>/{resource}/openai` stands in for `https://{resource}.openai.azure.com/openai`),
 *   or plain `/openai/...` for the first resource. An unknown resource or path is Azure's 404. Files,
 *   jobs and deployments belong to the resource they were made on.
 * - `api-version` on every call: missing → 404 "Resource not found" (what Azure really answers);
 *   not one of AZURE_API_VERSIONS → 400 "API version not supported".
 * - Auth: the `api-key` header, or `Authorization: Bearer <Entra token>` (the `AzureOpenAI` client's
 *   `azureADTokenProvider`); each failure has its own real 401 body.
 * - Files upload → 201 + `Location`, `status: "pending"` (no `bytes` yet, like the spec's example); the
 *   next GET of the file finds it `processed`, or `error` + `status_details` when a line is not chat JSONL.
 *   A job may only use a `processed` file.
 * - Jobs: 201 `pending` → `running` → `succeeded` (one step per GET of the job, or `advance()`), with
 *   `fine_tuned_model: "<model>.ft-<hex of the job id>[-<suffix>]"`; `failJob()` forces `failed`.
 *   Absent fields are left out rather than sent as null, as in every example of the spec.
 * - `method` is not part of 2024-10-21's (nor 2024-12-01-preview's) job schema, and Azure ignores
 *   members it does not know: on those versions it is dropped, so only top-level `hyperparameters`
 *   count. From 2025-03-01-preview it is accepted and echoed, and its supervised hyperparameters apply.
 *   A hyperparameter nobody chose reads `-1` (Azure's placeholder for "the service picks"), at the top
 *   level and in the echoed method.
 * - Chat on `/deployments/{name}/chat/completions` → 404 `DeploymentNotFound` unless `registerDeployment`
 *   made it; answers carry Azure's content-filter results, and a stream starts with Azure's
 *   choice-less `prompt_filter_results` chunk.
 * - Batches (Global Batch): `/batches`, `/batches/{id}`, `/batches/{id}/cancel` with OpenAI's batch
 *   wire (openai-batches.ts): the create `endpoint` is `/chat/completions`, every line's `model` must
 *   be a Global-Batch deployment (`registerBatchDeployment`), and even a batch without failures gets
 *   an empty error file, as Azure's docs say.
 * - Throttling: `failNext(…, 429)` answers `tooManyRequests` on authoring calls and Azure's "exceeded
 *   token rate limit" body on inference, with `retry-after` (1 s unless `retryAfter` is given).
 */
import { fakeBatches } from './openai-batches';
import { randomBytes } from 'node:crypto';
import type http from 'node:http';
import { chatCompletion, chatCompletionChunks, findChatJsonlError, parseChatRequest, writeEvents } from './chat';
import { fakeReply } from './fake-model';
import type { FakeCheckpoint, FakeFile } from './openai-server';
import {
  batchByIdReply,
  cursorPage,
  FakeHttpError,
  readJsonObject,
  readMultipart,
  startFakeServer,
  unixNow,
  type FailOptions,
  type FakeReply,
  type RecordedRequest,
} from './kit';

/** The stable version and newer real ones (authoring and inference both exist in these). */
export const AZURE_API_VERSIONS = ['2024-10-21', '2024-12-01-preview', '2025-03-01-preview', '2025-04-01-preview'];
/** Versions whose job schema has `method`. */
const METHOD_VERSIONS = new Set(['2025-03-01-preview', '2025-04-01-preview']);

/** Azure keys are 32 hex characters. */
export const AZURE_TEST_API_KEY = '00112233445566778899aabbccddeeff';
export const AZURE_TEST_ENTRA_TOKEN = 'eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.fake-entra-token.c2lnbmF0dXJl';
export const AZURE_TEST_RESOURCE = 'fake-aoai';
/** Base models the fake fine-tunes (Azure's fine-tunable models, with their versions). */
export const AZURE_FINE_TUNABLE_MODELS = [
  'gpt-4o-mini-2024-07-18',
  'gpt-4o-2024-08-06',
  'gpt-4.1-2025-04-14',
  'gpt-4.1-mini-2025-04-14',
  'gpt-4.1-nano-2025-04-14',
  'gpt-35-turbo-0125',
];

const UPLOAD_PURPOSES = ['fine-tune', 'fine-tune-results', 'assistants', 'assistants_output', 'batch'];
const TERMINAL = new Set(['succeeded', 'failed', 'cancelled']);

/** OpenAI's file object, which Azure also moves through pending (and may end in error). */
export interface AzureFakeFile extends Omit<FakeFile, 'status'> {
  status: 'pending' | 'processed' | 'error';
  status_details?: string;
  /** Not on the wire: the resource the file belongs to. */
  resource: string;
}

export interface AzureJobError {
  code: string;
  message: string;
  param: string | null;
}

export interface AzureFakeJob {
  id: string;
  object: 'fine_tuning.job';
  status: 'pending' | 'running' | 'succeeded' | 'failed' | 'cancelled';
  model: string;
  training_file: string;
  validation_file?: string;
  hyperparameters: Record<string, unknown>;
  method?: Record<string, unknown>;
  suffix?: string;
  seed: number;
  created_at: number;
  estimated_finish?: number;
  finished_at?: number;
  fine_tuned_model?: string;
  trained_tokens?: number;
  result_files?: string[];
  error?: AzureJobError;
  /** Not on the wire. */
  resource: string;
}

export interface AzureFakeEvent {
  id: string;
  object: 'fine_tuning.job.event';
  created_at: number;
  level: 'info' | 'warning' | 'error';
  message: string;
  type: 'message' | 'metrics';
  data?: Record<string, number>;
}

/** Azure's checkpoint is OpenAI's. */
export type AzureFakeCheckpoint = FakeCheckpoint;

interface AzureChatTarget {
  resource: string;
  deployment: string;
  apiVersion: string;
}

export interface AzureChatRequest extends AzureChatTarget {
  /** The body as received. */
  body: Record<string, unknown>;
  /** The headers as received (`api-key` or `authorization` carried the credential). */
  headers: http.IncomingHttpHeaders;
}

export interface FakeAzureOpenAIOptions {
  /** Resource names the fake answers for (default [AZURE_TEST_RESOURCE]); the first also serves plain `/openai/...`. */
  resources?: string[];
  /** The `api-key` header's value (default AZURE_TEST_API_KEY). */
  apiKey?: string;
  /** The Entra access token `Authorization: Bearer` may carry instead (default AZURE_TEST_ENTRA_TOKEN). */
  entraToken?: string;
  /** Lifecycle steps a job advances per GET of it (default 1; 0: only `advance()` moves jobs). */
  stepsPerPoll?: number;
  /** GETs of a file before its processing ends (default 1; 0: processed as soon as it is stored). */
  pollsToProcessFile?: number;
  /** Base models a job may fine-tune (default AZURE_FINE_TUNABLE_MODELS). */
  fineTunableModels?: string[];
  /** Pause between streamed chat chunks (default 0), so a test can disconnect midway. */
  streamDelayMs?: number;
  /** Batch requests run per GET of an in-progress batch (default: all). */
  batchLinesPerPoll?: number;
}

type ErrorShape = 'azure' | 'openai' | 'token';

interface AzureErrorOptions {
  shape?: ErrorShape;
  param?: string | null;
  headers?: Record<string, string>;
}

/**
 * Azure's errors: `{error: {code, message}}` (REST guidelines), OpenAI's `{error: {message, type, param,
 * code}}` for chat bodies the model service rejects, and `{statusCode, message}` from Azure's front
 * door for a bad Entra token.
 */
class AzureError extends FakeHttpError {
  constructor(status: number, code: string | null, message: string, { shape = 'azure', param = null, headers = {} }: AzureErrorOptions = {}) {
    super(status, message, { code, shape, param }, headers);
  }
}

function renderError(e: FakeHttpError): FakeReply {
  const { code, shape, param } = e.details as { code?: string | null; shape?: ErrorShape; param?: string | null };
  if (shape === 'token') return { status: e.status, body: { statusCode: e.status, message: e.message } };
  if (shape === 'openai') {
    return { status: e.status, body: { error: { message: e.message, type: 'invalid_request_error', param: param ?? null, code: code ?? null } } };
  }
  return { status: e.status, body: { error: { code: code ?? String(e.status), message: e.message } } };
}

// Azure's own wording of its commonest failures.
const DEPLOYMENT_NOT_FOUND =
  'The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again.';
const MISSING_KEY = 'Access denied due to missing subscription key. Make sure to include subscription key when making requests to an API.';
const BAD_KEY =
  'Access denied due to invalid subscription key or wrong API endpoint. ' +
  'Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.';
const BAD_TOKEN = 'Unauthorized. Access token is missing, invalid, audience is incorrect (https://cognitiveservices.azure.com), or have expired.';

const resourceNotFound = () => new AzureError(404, '404', 'Resource not found');
const invalidPayload = (message: string) => new AzureError(400, 'invalidPayload', message);
const hex32 = () => randomBytes(16).toString('hex');
const SAFE = { filtered: false, severity: 'safe' };
const contentFilterResults = () => ({ hate: SAFE, self_harm: SAFE, sexual: SAFE, violence: SAFE });
const promptFilterResults = () => [{ prompt_index: 0, content_filter_results: contentFilterResults() }];

/** What an injected failure of `status` answers on `url`, worded as Azure words it. */
function injectedError(status: number, options: FailOptions, url: URL): FakeHttpError {
  if (status === 429) {
    const retryAfter = options.retryAfter ?? '1';
    const inference = url.pathname.includes('/deployments/');
    const message = inference
      ? `Requests to the ChatCompletions_Create Operation under Azure OpenAI API version ${url.searchParams.get('api-version')} ` +
        `have exceeded token rate limit of your current OpenAI S0 pricing tier. Please retry after ${retryAfter} seconds.`
      : 'Too many requests. Please retry later.';
    return new AzureError(429, inference ? '429' : 'tooManyRequests', options.message ?? message, { headers: { 'retry-after': retryAfter } });
  }
  const codes: Record<number, [string, string]> = {
    400: ['invalidPayload', 'The request data is invalid for this operation.'],
    401: ['401', BAD_KEY],
    403: ['forbidden', 'The operation is forbidden for the current user/api key.'],
    404: ['notFound', 'The resource is not found.'],
    409: ['conflict', 'The requested operation conflicts with the current resource state.'],
    503: ['serviceUnavailable', 'The service is currently not available.'],
  };
  const [code, message] = codes[status] ?? ['internalFailure', 'Internal error. Please retry.'];
  return new AzureError(status, code, options.message ?? message);
}

export async function startFakeAzureOpenAI(opts: FakeAzureOpenAIOptions = {}) {
  const resources = opts.resources ?? [AZURE_TEST_RESOURCE];
  const apiKey = opts.apiKey ?? AZURE_TEST_API_KEY;
  const entraToken = opts.entraToken ?? AZURE_TEST_ENTRA_TOKEN;
  const stepsPerPoll = opts.stepsPerPoll ?? 1;
  const pollsToProcessFile = opts.pollsToProcessFile ?? 1;
  const fineTunable = new Set(opts.fineTunableModels ?? AZURE_FINE_TUNABLE_MODELS);
  let streamDelayMs = opts.streamDelayMs ?? 0;
  const state = {
    files: new Map<string, AzureFakeFile>(),
    jobs: new Map<string, AzureFakeJob>(),
    events: new Map<string, AzureFakeEvent[]>(), // per job, oldest first
    checkpoints: new Map<string, AzureFakeCheckpoint[]>(), // per job, oldest first
    /** Deployments by `${resource}/${name}`: the model each serves. */
    deployments: new Map<string, string>(),
    /** Global-Batch deployments by `${resource}/${name}`: the model each serves. */
    batchDeployments: new Map<string, string>(),
    /** Every job creation body as received (before validation), with the version it came under. */
    jobRequests: [] as { resource: string; apiVersion: string; body: Record<string, unknown> }[],
    /** Every chat request that reached a deployment, in arrival order. */
    chatRequests: [] as AzureChatRequest[],
    /** Streams whose client went away before `[DONE]`. */
    abandonedStreams: 0,
    /** Every request the fake received (filled by the kit). */
    requests: [] as RecordedRequest[],
  };
  /** GETs each pending file still needs before its processing ends. */
  const processing = new Map<string, number>();
  /** Jobs `failJob` marked: their next step ends them `failed` with this error. */
  const failures = new Map<string, AzureJobError>();

  // ---- files

  function storeFile(resource: string, filename: string, purpose: string, content: Buffer, status: AzureFakeFile['status']): AzureFakeFile {
    const id = `file-${hex32()}`;
    const file: AzureFakeFile = { id, object: 'file', bytes: content.length, created_at: unixNow(), filename, purpose, status, content, resource };
    state.files.set(file.id, file);
    return file;
  }

  /** The wire object: no internals, and no size until processing has measured it. */
  function fileObject({ content: _content, resource: _resource, ...wire }: AzureFakeFile) {
    if (wire.status !== 'pending') return wire;
    const { bytes: _bytes, ...pending } = wire;
    return pending;
  }

  /** Ends a pending file's processing: fine-tune files must be chat JSONL. */
  function processFile(file: AzureFakeFile) {
    processing.delete(file.id);
    const problem = file.purpose === 'fine-tune' ? findChatJsonlError(file.content) : undefined;
    Object.assign(file, problem ? { status: 'error', status_details: `Validation of jsonl data failed. ${problem}` } : { status: 'processed' });
  }

  function pollFile(file: AzureFakeFile) {
    if (file.status !== 'pending') return;
    const left = (processing.get(file.id) ?? 0) - 1;
    if (left <= 0) processFile(file);
    else processing.set(file.id, left);
  }

  async function upload(req: http.IncomingMessage, resource: string): Promise<AzureFakeFile> {
    const { fields, files } = await readMultipart(req, invalidPayload);
    if (!fields.purpose) throw invalidPayload("The 'purpose' field is required.");
    if (!UPLOAD_PURPOSES.includes(fields.purpose)) {
      throw invalidPayload(`The purpose '${fields.purpose}' is not supported. Supported purposes: ${UPLOAD_PURPOSES.join(', ')}.`);
    }
    if (!files.file) throw invalidPayload("The 'file' field is required.");
    const file = storeFile(resource, files.file.filename, fields.purpose, files.file.content, 'pending');
    processing.set(file.id, pollsToProcessFile);
    if (pollsToProcessFile <= 0) processFile(file);
    return file;
  }

  function findFile(resource: string, id: string): AzureFakeFile {
    const file = state.files.get(id);
    if (!file || file.resource !== resource) throw new AzureError(404, 'notFound', `File with id '${id}' was not found.`);
    return file;
  }

  // ---- batches (one service per resource: its files, its Global-Batch deployments)

  const batchServices = new Map<string, ReturnType<typeof fakeBatches>>();
  function batchesOf(resource: string) {
    let service = batchServices.get(resource);
    if (!service) {
      service = fakeBatches({
        files: {
          content: (id) => {
            const file = state.files.get(id);
            return file?.resource === resource ? file : undefined;
          },
          store: (filename, purpose, content) => storeFile(resource, filename, purpose, content, 'processed'),
        },
        servable: (model) => state.batchDeployments.has(`${resource}/${model}`),
        endpoints: ['/chat/completions'],
        error: (status, message, param, code) => new AzureError(status, code ?? 'invalidPayload', message, { param: param ?? null }),
        linesPerPoll: opts.batchLinesPerPoll,
        alwaysErrorFile: true,
      });
      batchServices.set(resource, service);
    }
    return service;
  }

  // ---- fine-tuning jobs

  const addEvent = (job: AzureFakeJob, message: string, extra: Partial<AzureFakeEvent> = {}) =>
    state.events.get(job.id)!.push({
      id: `ftevent-${hex32()}`,
      object: 'fine_tuning.job.event',
      created_at: unixNow(),
      level: 'info',
      message,
      type: 'message',
      ...extra,
    });

  function findJob(resource: string, id: string): AzureFakeJob {
    const job = state.jobs.get(id);
    if (!job || job.resource !== resource) throw new AzureError(404, 'notFound', `Fine-tuning job with id '${id}' was not found.`);
    return job;
  }

  /** A training or validation file a job may use: this resource's, for fine-tuning, processed. */
  function usableFile(resource: string, id: unknown, param: string): string {
    if (typeof id !== 'string' || !id) throw invalidPayload(`The '${param}' field is required.`);
    const file = state.files.get(id);
    if (!file || file.resource !== resource) throw invalidPayload(`The ${param} '${id}' does not exist.`);
    if (file.purpose !== 'fine-tune') throw invalidPayload(`The ${param} '${id}' has purpose '${file.purpose}'; fine-tuning needs purpose 'fine-tune'.`);
    if (file.status === 'error') throw new AzureError(400, 'jsonlValidationFailed', `The ${param} '${id}' failed validation: ${file.status_details}`);
    if (file.status !== 'processed') throw invalidPayload(`The ${param} '${id}' is not ready: its status is '${file.status}'. Wait until it is 'processed'.`);
    return id;
  }

  function checkHyperparameters(value: unknown = {}): Record<string, unknown> {
    if (!value || typeof value !== 'object' || Array.isArray(value)) throw invalidPayload("The 'hyperparameters' field must be an object.");
    const hp = value as Record<string, unknown>;
    for (const key of ['n_epochs', 'batch_size']) {
      if (hp[key] !== undefined && !Number.isInteger(hp[key])) throw invalidPayload(`The hyperparameter '${key}' must be an integer.`);
    }
    if (hp.learning_rate_multiplier !== undefined && typeof hp.learning_rate_multiplier !== 'number') {
      throw invalidPayload("The hyperparameter 'learning_rate_multiplier' must be a number.");
    }
    return { n_epochs: -1, batch_size: -1, learning_rate_multiplier: -1, ...hp };
  }

  function createJob(resource: string, apiVersion: string, body: Record<string, unknown>): AzureFakeJob {
    state.jobRequests.push({ resource, apiVersion, body });
    const { model, suffix, seed } = body;
    if (typeof model !== 'string' || !model) throw invalidPayload("The 'model' field is required.");
    if (!fineTunable.has(model)) throw invalidPayload(`The specified base model '${model}' does not support fine-tuning.`);
    const trainingFile = usableFile(resource, body.training_file, 'training_file');
    const validationFile = body.validation_file == null ? undefined : usableFile(resource, body.validation_file, 'validation_file');
    if (suffix !== undefined && (typeof suffix !== 'string' || !/^[A-Za-z0-9_-]{1,40}$/.test(suffix))) {
      throw invalidPayload("The 'suffix' may contain up to 40 characters (a-z, A-Z, 0-9, - and _).");
    }
    if (seed !== undefined && !Number.isInteger(seed)) throw invalidPayload("The 'seed' field must be an integer.");
    const method = METHOD_VERSIONS.has(apiVersion) ? (body.method as Record<string, unknown> | undefined) : undefined;
    const methodHyperparameters = (method?.supervised as { hyperparameters?: unknown } | undefined)?.hyperparameters;
    const hyperparameters = checkHyperparameters(body.hyperparameters ?? methodHyperparameters);
    const job: AzureFakeJob = {
      id: `ftjob-${hex32()}`,
      object: 'fine_tuning.job',
      status: 'pending',
      model,
      training_file: trainingFile,
      validation_file: validationFile,
      hyperparameters,
      method: method && { ...method, supervised: { ...(method.supervised as object), hyperparameters } },
      suffix: suffix,
      seed: (seed as number | undefined) ?? randomBytes(2).readUInt16BE(),
      created_at: unixNow(),
      resource,
    };
    state.jobs.set(job.id, job);
    state.events.set(job.id, []);
    state.checkpoints.set(job.id, []);
    addEvent(job, 'Job enqueued. Waiting for jobs ahead to complete.');
    return job;
  }

  const jobObject = ({ resource: _resource, ...wire }: AzureFakeJob) => wire;

  /** One lifecycle step: pending → running → succeeded, or to `failed` when `failJob` asked for it. */
  function step(job: AzureFakeJob) {
    if (TERMINAL.has(job.status)) return;
    const failure = failures.get(job.id);
    if (failure) return fail(job, failure);
    if (job.status === 'pending') {
      job.status = 'running';
      job.estimated_finish = unixNow() + 600;
      addEvent(job, 'Job started.');
      addEvent(job, 'Step 10: training loss=0.9', { type: 'metrics', data: { step: 10, train_loss: 0.9, train_mean_token_accuracy: 0.7 } });
    } else {
      succeed(job);
    }
  }

  function fail(job: AzureFakeJob, error: AzureJobError) {
    failures.delete(job.id);
    Object.assign(job, { status: 'failed', error, finished_at: unixNow(), estimated_finish: undefined });
    addEvent(job, `Job failed. ${error.message}`, { level: 'error' });
  }

  function succeed(job: AzureFakeJob) {
    const hex = job.id.replace(/^ftjob-/, '');
    const model = `${job.model}.ft-${hex}${job.suffix ? `-${job.suffix}` : ''}`;
    const results = storeFile(job.resource, 'results.csv', 'fine-tune-results', Buffer.from(RESULTS_CSV), 'processed');
    Object.assign(job, {
      status: 'succeeded',
      fine_tuned_model: model,
      finished_at: unixNow(),
      estimated_finish: undefined,
      result_files: [results.id],
      trained_tokens: Math.ceil(state.files.get(job.training_file)!.bytes / 4) * 3,
    });
    state.checkpoints.set(
      job.id,
      CHECKPOINT_METRICS.map((metrics) => checkpoint(job, model, metrics)),
    );
    addEvent(job, `Completed results file: ${results.id}`);
    addEvent(job, 'Job succeeded.');
  }

  const checkpoint = (job: AzureFakeJob, model: string, metrics: Record<string, number>): AzureFakeCheckpoint => ({
    id: `ftchkpt-${hex32()}`,
    object: 'fine_tuning.job.checkpoint',
    created_at: unixNow(),
    fine_tuned_model_checkpoint: `${model}:ckpt-step-${metrics.step}`,
    step_number: metrics.step,
    metrics,
    fine_tuning_job_id: job.id,
  });

  function cancel(job: AzureFakeJob): AzureFakeJob {
    if (TERMINAL.has(job.status)) throw new AzureError(400, 'unexpectedEntityState', `The job cannot be cancelled because its status is '${job.status}'.`);
    Object.assign(job, { status: 'cancelled', finished_at: unixNow(), estimated_finish: undefined });
    addEvent(job, 'Job cancelled.');
    return job;
  }

  const page = <T extends { id: string }>(oldestFirst: T[], query: URLSearchParams, defaultLimit: number) =>
    cursorPage([...oldestFirst].reverse(), query, defaultLimit, () => invalidPayload("The 'limit' must be a positive integer."));

  // ---- chat

  async function chat(req: http.IncomingMessage, res: http.ServerResponse, target: AzureChatTarget): Promise<FakeReply | void> {
    const { resource, deployment, apiVersion } = target;
    const model = state.deployments.get(`${resource}/${deployment}`);
    if (!model) throw new AzureError(404, 'DeploymentNotFound', DEPLOYMENT_NOT_FOUND);
    const body = await readJsonObject(req, () => new AzureError(400, null, 'We could not parse the JSON body of your request.', { shape: 'openai' }));
    const request = parseChatRequest(body, (message, param, code) => new AzureError(400, code, message, { shape: 'openai', param }));
    state.chatRequests.push({ resource, deployment, apiVersion, body, headers: req.headers });
    const answer = fakeReply(model, request.conversation);
    if (!request.stream) {
      const completion = chatCompletion(model, answer, request.shape);
      const choices = completion.choices.map((choice) => ({ ...choice, content_filter_results: contentFilterResults() }));
      return { status: 200, body: { ...completion, choices, prompt_filter_results: promptFilterResults(), system_fingerprint: 'fp_fake' } };
    }
    // Azure opens every stream with a choice-less chunk holding the prompt's filter results.
    const opening = { id: '', object: '', created: 0, model: '', choices: [], prompt_filter_results: promptFilterResults() };
    const chunks = chatCompletionChunks(model, answer, request.includeUsage, request.shape).map((chunk) => ({
      ...chunk,
      system_fingerprint: 'fp_fake',
      // Only chunks that carry text were filtered; the role and finish chunks have empty results.
      choices: (chunk.choices as { delta: { content?: string } }[]).map((choice) => ({
        ...choice,
        content_filter_results: choice.delta.content ? contentFilterResults() : {},
      })),
    }));
    const events = [opening, ...chunks].map((c) => JSON.stringify(c)).concat('[DONE]');
    await writeEvents(res, events, { delayMs: streamDelayMs, onAbandoned: () => state.abandonedStreams++ });
  }

  // ---- routing

  /** The resource a path addresses and the path below `/openai`; an unknown resource is Azure's 404. */
  function address(pathname: string): { resource: string; prefix: string; path: string } {
    const m = /^(?:\/([^/]+))?\/openai(\/.*)?$/.exec(pathname);
    const resource = m ? (m[1] === undefined ? resources[0] : decodeURIComponent(m[1])) : undefined;
    if (!m || !resource || !resources.includes(resource)) throw resourceNotFound();
    return { resource, prefix: m[1] === undefined ? '/openai' : `/${m[1]}/openai`, path: m[2] ?? '/' };
  }

  function checkApiVersion(query: URLSearchParams): string {
    const version = query.get('api-version');
    if (!version) throw resourceNotFound();
    if (!AZURE_API_VERSIONS.includes(version)) throw new AzureError(400, 'BadRequest', 'API version not supported');
    return version;
  }

  function authenticate(req: http.IncomingMessage) {
    const key = req.headers['api-key'];
    const authorization = req.headers.authorization;
    if (key === undefined && authorization?.startsWith('Bearer ')) {
      if (authorization !== `Bearer ${entraToken}`) throw new AzureError(401, '401', BAD_TOKEN, { shape: 'token' });
      return;
    }
    if (key === undefined) throw new AzureError(401, '401', MISSING_KEY);
    if (key !== apiKey) throw new AzureError(401, '401', BAD_KEY);
  }

  const readJson = (req: http.IncomingMessage) => readJsonObject(req, () => invalidPayload('The request body is not a valid JSON object.'));
  const ok = (body: unknown): FakeReply => ({ status: 200, body });

  /** `GET /openai/models`: the models the resource offers, Azure's shape (`created_at`, capabilities, no owner); an embeddings model has no chat. */
  function listModels() {
    const model = (id: string, chat: boolean) => ({
      id,
      object: 'model',
      status: 'succeeded',
      created_at: 1_720_000_000,
      capabilities: { fine_tune: chat, inference: true, completion: false, chat_completion: chat, embeddings: !chat },
      lifecycle_status: 'generally-available',
      deprecation: { inference: 1_800_000_000 },
    });
    return { object: 'list', data: [...AZURE_FINE_TUNABLE_MODELS.map((id) => model(id, true)), model('text-embedding-3-small', false)] };
  }

  async function route(req: http.IncomingMessage, res: http.ServerResponse, url: URL): Promise<FakeReply | void> {
    const { resource, prefix, path } = address(url.pathname);
    const apiVersion = checkApiVersion(url.searchParams);
    authenticate(req);
    const method = req.method ?? 'GET';
    const query = url.searchParams;
    const created = (body: { id: string }, collection: string): FakeReply => ({
      status: 201,
      body,
      headers: { location: `http://${req.headers.host}${prefix}/${collection}/${body.id}` },
    });

    if (path === '/models' && method === 'GET') return ok(listModels());
    if (path === '/files') {
      if (method === 'POST') return created(fileObject(await upload(req, resource)), 'files');
      if (method === 'GET') {
        const purpose = query.get('purpose');
        const files = [...state.files.values()].filter((f) => f.resource === resource && (!purpose || f.purpose === purpose));
        return ok({ object: 'list', data: files.reverse().map(fileObject) });
      }
    }
    let m = /^\/files\/([^/]+)(\/content)?$/.exec(path);
    if (m) {
      const file = findFile(resource, decodeURIComponent(m[1]));
      const action = `${method} ${m[2] ?? ''}`;
      if (action === 'GET ') {
        pollFile(file);
        return ok(fileObject(file));
      }
      if (action === 'GET /content') return { status: 200, body: file.content };
      if (action === 'DELETE ') {
        state.files.delete(file.id);
        return ok({ object: 'file', deleted: true, id: file.id });
      }
    }
    if (path === '/fine_tuning/jobs') {
      if (method === 'POST') return created(jobObject(createJob(resource, apiVersion, await readJson(req))), 'fine_tuning/jobs');
      if (method === 'GET') {
        const list = page(
          [...state.jobs.values()].filter((j) => j.resource === resource),
          query,
          20,
        );
        return ok({ ...list, data: list.data.map(jobObject) });
      }
    }
    m = /^\/fine_tuning\/jobs\/([^/]+)(\/cancel|\/events|\/checkpoints)?$/.exec(path);
    if (m) {
      const job = findJob(resource, decodeURIComponent(m[1]));
      const action = `${method} ${m[2] ?? ''}`;
      if (action === 'GET ') {
        for (let i = 0; i < stepsPerPoll; i++) step(job);
        return ok(jobObject(job));
      }
      if (action === 'DELETE ') {
        for (const store of [state.jobs, state.events, state.checkpoints]) store.delete(job.id);
        return { status: 204 };
      }
      if (action === 'POST /cancel') return ok(jobObject(cancel(job)));
      if (action === 'GET /events') return ok(page(state.events.get(job.id)!, query, 20));
      if (action === 'GET /checkpoints') return ok(page(state.checkpoints.get(job.id)!, query, 10));
    }
    if (path === '/batches') {
      if (method === 'POST') return created(batchesOf(resource).create(await readJson(req)), 'batches');
      if (method === 'GET') return ok(batchesOf(resource).list(query));
    }
    const batchReply = batchByIdReply(method, path, '', () => batchesOf(resource));
    if (batchReply) return batchReply;
    m = /^\/deployments\/([^/]+)\/chat\/completions$/.exec(path);
    if (m && method === 'POST') return chat(req, res, { resource, deployment: decodeURIComponent(m[1]), apiVersion });
    throw resourceNotFound();
  }

  const server = await startFakeServer({ route, renderError, injectedError });
  state.requests = server.requests;

  return {
    origin: server.origin,
    /** The base URL of `resource` (default the first): what `https://{resource}.openai.azure.com/openai` is to Azure. */
    url: (resource = resources[0]) => `${server.origin}/${resource}/openai`,
    /** The gateway's `GATEWAY_AZURE_OPENAI_BASE_URL` for this fake. */
    baseUrlTemplate: `${server.origin}/{resource}/openai`,
    /** The `endpoint` the `AzureOpenAI` client takes for `resource` (it appends `/openai`). */
    endpoint: (resource = resources[0]) => `${server.origin}/${resource}`,
    state,
    /** Deploys `model` as `name` on `resource`: what Azure's management plane would do. */
    registerDeployment(name: string, model: string, resource = resources[0]) {
      state.deployments.set(`${resource}/${name}`, model);
    },
    /** Deploys `model` as the Global-Batch deployment `name` on `resource` (SKU `GlobalBatch`). */
    registerBatchDeployment(name: string, model: string, resource = resources[0]) {
      state.batchDeployments.set(`${resource}/${name}`, model);
    },
    /** The batch service of `resource` (default the first): its batches, and hooks to fail requests or batches. */
    batches: (resource = resources[0]) => batchesOf(resource),
    /** Moves the job `steps` lifecycle steps on, as that many GETs of it would. */
    advance(jobId: string, steps = 1) {
      const job = state.jobs.get(jobId);
      if (!job) throw new Error(`No fake Azure job ${jobId}`);
      for (let i = 0; i < steps; i++) step(job);
    },
    /** The job's next lifecycle step ends it `failed` with `error`. */
    failJob(jobId: string, error: AzureJobError = DEFAULT_JOB_FAILURE) {
      if (!state.jobs.has(jobId)) throw new Error(`No fake Azure job ${jobId}`);
      failures.set(jobId, error);
    },
    /** The next `times` (default 1) requests matching method and path prefix (e.g. `/fake-aoai/openai/files`) fail. */
    failNext: server.failNext,
    /** The next `times` (default 1) matching requests are answered only after `ms`. */
    delayNext: server.delayNext,
    /** The JSON body of the next `times` (default 1) matching successful answers goes through `reshape` (a field dropped, retyped). */
    reshapeNext: server.reshapeNext,
    /** Pause between streamed chat chunks from now on. */
    setStreamDelay(ms: number) {
      streamDelayMs = ms;
    },
    close: server.close,
  };
}

export type FakeAzureOpenAI = Awaited<ReturnType<typeof startFakeAzureOpenAI>>;

const DEFAULT_JOB_FAILURE: AzureJobError = { code: 'invalidTrainingData', message: 'The training data could not be used.', param: 'training_file' };

const CHECKPOINT_METRICS = [
  { step: 10, train_loss: 0.9, train_mean_token_accuracy: 0.7, valid_loss: 1.0, valid_mean_token_accuracy: 0.65 },
  { step: 20, train_loss: 0.65, train_mean_token_accuracy: 0.8, valid_loss: 0.8, valid_mean_token_accuracy: 0.75 },
  { step: 30, train_loss: 0.4, train_mean_token_accuracy: 0.9, valid_loss: 0.6, valid_mean_token_accuracy: 0.85 },
];

/** The metrics CSV a succeeded job's result file holds (one row per checkpoint). */
const RESULTS_CSV = [Object.keys(CHECKPOINT_METRICS[0]).join(','), ...CHECKPOINT_METRICS.map((m) => Object.values(m).join(','))].join('\n') + '\n';
