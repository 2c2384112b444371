/**
 * A fake Together AI for tests, on 127.0.0.1 over real HTTP, speaking Together's wire protocol
 * (`{data}` lists without paging, ISO times on jobs and Unix seconds on files, FileResponse with its
 * capitalised `FileType`/`Processed` keys, errors `{error: {message, type, param, code}}`).
 *
 * Uploads come two ways, as on the real API:
 * - the SDKs' flow: `POST /v1/files` (form fields `file_name`, `file_type`, `purpose`) answers **302**
 *   with a presigned `Location` on this server and `X-Together-File-Id`; the bytes go to that URL with
 *   `PUT` (no API key; S3-style XML 403 when the URL is unknown or expired); then `GET /v1/files/{id}`
 *   (TypeScript SDK) or `POST /v1/files/{id}/preprocess` (Python SDK);
 * - the documented multipart `POST /v1/files/upload`.
 * A fine-tune file's `processing_status` advances one step per GET (PENDING → RUNNING → COMPLETED or
 * INVALID_FORMAT, with a `validation_report`).
 *
 * Fine-tuning jobs advance one step per GET of the job: pending → queued → running (one epoch per GET,
 * with checkpoint_save / epoch_complete events and metrics) → compressing → uploading → completed;
 * `failJob` forces `error`; cancel goes cancel_requested → cancelled. A completed job's
 * `model_output_name` answers chat, like the configured base models.
 *
 * Batches: `/v1/batches` in Together's own shapes (together-batches.ts).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type http from 'node:http';
import { answerChat } from './chat';
import { inspectJsonl } from './jsonl';
import { togetherBatches } from './together-batches';
import {
  batchByIdReply,
  bearerToken,
  FakeHttpError,
  isoNow,
  readBody,
  readJsonObject,
  readMultipart,
  startFakeServer,
  storageXmlError,
  unixNow,
  type FakeReply,
  type RecordedRequest,
} from './kit';

export interface FakeTogetherOptions {
  /** The key `Authorization: Bearer …` must carry. */
  apiKey?: string;
  /** The account's user name: the namespace of fine-tuned models (`<user>/<model>-<suffix>-<hash>`). */
  userId?: string;
  /** Base models fine-tuning accepts. */
  fineTuneModels?: string[];
  /** Base models chat serves (besides completed jobs' `model_output_name`). Default: the fine-tune models. */
  chatModels?: string[];
  /** How long a presigned upload URL stays valid (default 15 minutes). */
  presignedTtlMs?: number;
  /** Pause between streamed chat chunks. */
  streamDelayMs?: number;
}

export type TogetherPurpose = 'fine-tune' | 'eval' | 'eval-sample' | 'eval-output' | 'eval-summary' | 'batch-generated' | 'batch-api';
export type TogetherFileType = 'jsonl' | 'parquet' | 'csv';

export interface TogetherValidationReport {
  valid: boolean;
  file_id: string;
  nlines: number;
  dataset_format?: 'CONVERSATION' | 'INSTRUCTION' | 'GENERAL';
  dataset_has_tools: boolean;
  dataset_is_multimodal: boolean;
  error?: string;
  error_type?: 'INVALID_FORMAT';
}

export interface TogetherFile {
  id: string;
  object: 'file';
  created_at: number;
  filename: string;
  bytes: number;
  purpose: TogetherPurpose;
  FileType: TogetherFileType;
  Processed: boolean;
  /** Only fine-tune files go through validation. */
  processing_status?: 'PENDING' | 'RUNNING' | 'COMPLETED' | 'INVALID_FORMAT';
  validation_report?: TogetherValidationReport;
}

export type TogetherJobStatus = 'pending' | 'queued' | 'running' | 'compressing' | 'uploading' | 'cancel_requested' | 'cancelled' | 'error' | 'completed';

export interface TogetherEvent {
  object: 'fine-tune-event';
  created_at: string;
  level: 'info' | 'warning' | 'error';
  message: string;
  type: string;
  param_count: number;
  token_count: number;
  total_steps: number;
  wandb_url: string;
  step: number;
  checkpoint_path: string;
  model_path: string;
  training_offset: number;
  hash: string;
}

export interface TogetherCheckpoint {
  step: number;
  path: string;
  created_at: string;
  checkpoint_type: string;
  checkpoint?: 'model' | 'adapter';
}

/** The full job (`GET /v1/fine-tunes/{id}`); create, list and cancel answer it without its `FULL_ONLY` fields. */
export interface TogetherJob {
  id: string;
  status: TogetherJobStatus;
  created_at: string;
  updated_at: string;
  started_at?: string;
  user_id: string;
  owner_address: string;
  model: string;
  model_output_name: string;
  model_output_path: string;
  suffix?: string;
  training_file: string;
  validation_file?: string;
  trainingfile_numlines: number;
  trainingfile_size: number;
  n_epochs: number;
  n_checkpoints: number;
  n_evals: number;
  batch_size: number;
  learning_rate: number;
  lr_scheduler: Record<string, unknown>;
  warmup_ratio: number;
  max_grad_norm: number;
  weight_decay: number;
  random_seed: number | null;
  packing: boolean;
  training_type: Record<string, unknown>;
  training_method: Record<string, unknown>;
  wandb_project_name?: string;
  wandb_name?: string;
  token_count: number;
  param_count: number;
  total_price: number;
  epochs_completed: number;
  queue_depth: number;
  events: TogetherEvent[];
  progress: { estimate_available: boolean; seconds_remaining: number };
}

const FULL_ONLY = ['events', 'model_output_path', 'trainingfile_numlines', 'trainingfile_size', 'param_count', 'epochs_completed', 'queue_depth'] as const;

const DEFAULT_FINE_TUNE_MODELS = [
  'meta-llama/Meta-Llama-3.1-8B-Instruct-Reference',
  'meta-llama/Meta-Llama-3.1-70B-Instruct-Reference',
  'Qwen/Qwen2.5-7B-Instruct',
];
const PURPOSES: readonly TogetherPurpose[] = ['fine-tune', 'eval', 'eval-sample', 'eval-output', 'eval-summary', 'batch-generated', 'batch-api'];
const FILE_TYPES: readonly TogetherFileType[] = ['jsonl', 'parquet', 'csv'];
const TERMINAL: ReadonlySet<TogetherJobStatus> = new Set(['completed', 'cancelled', 'error']);
/** What `batch_size: "max"` resolves to in the job the API answers. */
const MAX_BATCH_SIZE = 32;
const DATASET_FORMATS = { chat: 'CONVERSATION', completion: 'INSTRUCTION', text: 'GENERAL' } as const;
/** LoRA is the default training type; these are the adapter settings the job reports unless given. */
const LORA_DEFAULTS = { type: 'Lora', lora_r: 8, lora_alpha: 8, lora_dropout: 0, lora_trainable_modules: 'all-linear' };

// ---- errors ------------------------------------------------------------------------------------

/** Together's `{error: {message, type, param, code}}`, or S3's XML on the presigned bucket. */
const apiError = (status: number, message: string, param: string | null = null, code: string | null = null, type = 'invalid_request_error') =>
  new FakeHttpError(status, message, { param, code, type });
const bucketError = (code: string, message: string) => new FakeHttpError(403, message, { bucket: true, code });

function renderError(e: FakeHttpError): FakeReply {
  if (e.details.bucket) return storageXmlError(e.status, String(e.details.code), e.message);
  return { status: e.status, body: { error: { message: e.message, type: e.details.type, param: e.details.param ?? null, code: e.details.code ?? null } } };
}

function injectedError(status: number, message: string | undefined, path: string): FakeHttpError {
  if (path.startsWith('/__presigned/')) {
    return new FakeHttpError(status, message ?? 'We encountered an internal error. Please try again.', { bucket: true, code: 'InternalError' });
  }
  if (status === 429) {
    return apiError(429, message ?? 'You have exceeded the rate limit for this model. Please try again later.', null, 'rate_limit_exceeded', 'rate_limit');
  }
  return apiError(status, message ?? 'Internal server error', null, null, status >= 500 ? 'server_error' : 'invalid_request_error');
}

// ---- request checks ----------------------------------------------------------------------------

/** Integer parameters, with their minimum. */
const INTEGER_FIELDS: Record<string, number> = {
  n_epochs: 1,
  n_checkpoints: 1,
  n_evals: 0,
  max_seq_length: 1,
  gradient_accumulation_steps: 1,
  early_stopping_patience: 0,
};
const NUMBER_FIELDS: Record<string, [min: number, max: number]> = {
  learning_rate: [Number.MIN_VALUE, Infinity],
  warmup_ratio: [0, 1],
  max_grad_norm: [0, Infinity],
  weight_decay: [0, Infinity],
  early_stopping_min_delta: [0, Infinity],
};
const BOOLEAN_FIELDS = ['packing', 'early_stopping_enabled'];
const STRING_FIELDS = [
  'suffix',
  'validation_file',
  'wandb_api_key',
  'wandb_base_url',
  'wandb_project_name',
  'wandb_name',
  'wandb_entity',
  'from_checkpoint',
  'from_hf_model',
  'hf_model_revision',
  'hf_api_token',
  'hf_output_repo_name',
];

/** The documented types and ranges of a fine-tune request's parameters (the wording of the messages is the fake's own). */
function checkFineTuneParams(body: Record<string, unknown>) {
  const invalid = (param: string, what: string) => apiError(400, `Invalid value for '${param}': ${what}`, param);
  for (const [param, min] of Object.entries(INTEGER_FIELDS)) {
    const v = body[param];
    if (v !== undefined && v !== null && (!Number.isInteger(v) || (v as number) < min)) throw invalid(param, `expected an integer >= ${min}`);
  }
  for (const [param, [min, max]] of Object.entries(NUMBER_FIELDS)) {
    const v = body[param];
    if (v !== undefined && v !== null && (typeof v !== 'number' || v < min || v > max)) throw invalid(param, `expected a number in [${min}, ${max}]`);
  }
  for (const param of BOOLEAN_FIELDS) if (body[param] !== undefined && typeof body[param] !== 'boolean') throw invalid(param, 'expected a boolean');
  for (const param of STRING_FIELDS) if (body[param] !== undefined && typeof body[param] !== 'string') throw invalid(param, 'expected a string');
  if (body.random_seed != null && !Number.isInteger(body.random_seed)) throw invalid('random_seed', 'expected an integer or null');
  const batch = body.batch_size;
  if (batch !== undefined && batch !== 'max' && !(Number.isInteger(batch) && (batch as number) >= 1)) {
    throw invalid('batch_size', 'expected an integer >= 1 or "max"');
  }
  if (typeof body.suffix === 'string' && body.suffix.length > 64) throw invalid('suffix', 'must be at most 64 characters');
  const oneOf = (param: string, key: string, allowed: string[]) => {
    const value = body[param] as Record<string, unknown> | null | undefined;
    if (value != null && (typeof value !== 'object' || !allowed.includes(value[key] as string))) {
      throw invalid(param, `${key} must be one of ${allowed.join(', ')}`);
    }
  };
  oneOf('training_type', 'type', ['Full', 'Lora']);
  oneOf('training_method', 'method', ['sft', 'dpo']);
  oneOf('lr_scheduler', 'lr_scheduler_type', ['linear', 'cosine']);
}

export async function startFakeTogether(opts: FakeTogetherOptions = {}) {
  const apiKey = opts.apiKey ?? 'tg-test-fake-key';
  const userId = opts.userId ?? 'fake-user';
  const fineTuneModels = new Set(opts.fineTuneModels ?? DEFAULT_FINE_TUNE_MODELS);
  const chatModels = new Set(opts.chatModels ?? fineTuneModels);
  const presignedTtlMs = opts.presignedTtlMs ?? 15 * 60_000;
  let origin = '';

  const state = {
    files: new Map<string, TogetherFile>(),
    /** The exact bytes of each file, by id. */
    fileContents: new Map<string, Buffer>(),
    jobs: new Map<string, TogetherJob>(),
    checkpoints: new Map<string, TogetherCheckpoint[]>(),
    metrics: new Map<string, Record<string, number>[]>(),
    /** Every fine-tune request body received (also the refused ones). */
    fineTuneRequests: [] as Record<string, unknown>[],
    /** Every chat-completion request body received. */
    chatRequests: [] as Record<string, unknown>[],
    /** Streams the client left before the end. */
    abandonedStreams: 0,
    /** Every request the fake received (filled by the kit). */
    requests: [] as RecordedRequest[],
  };
  /** Presigned upload URLs handed out, by token (each valid until its expiry, for one or more PUTs). */
  const presigned = new Map<string, { file: Omit<TogetherFile, 'bytes' | 'Processed'>; expiresAt: number }>();
  /** Jobs told to fail on their next GET, with the message. */
  const failures = new Map<string, string>();

  // ---- files ----

  function newFile(filename: string, purpose: TogetherPurpose, fileType: TogetherFileType) {
    return { id: `file-${randomUUID()}`, object: 'file' as const, created_at: unixNow(), filename, purpose, FileType: fileType };
  }

  function storeFile(file: Omit<TogetherFile, 'bytes' | 'Processed'>, content: Buffer): TogetherFile {
    const stored: TogetherFile = { ...file, bytes: content.length, Processed: true };
    if (file.purpose === 'fine-tune') stored.processing_status = 'PENDING';
    state.files.set(file.id, stored);
    state.fileContents.set(file.id, content);
    return stored;
  }

  /** The form fields of an upload request: the body (urlencoded, or JSON as the Python SDK may send) over the query string. */
  async function uploadFields(req: http.IncomingMessage, query: URLSearchParams): Promise<Record<string, string>> {
    const text = (await readBody(req)).toString('utf8');
    const fields: Record<string, string> = Object.fromEntries(query);
    if ((req.headers['content-type'] ?? '').includes('application/json')) {
      try {
        Object.assign(fields, JSON.parse(text));
      } catch {
        throw apiError(400, 'Invalid JSON body');
      }
    } else Object.assign(fields, Object.fromEntries(new URLSearchParams(text)));
    return fields;
  }

  function checkUploadFields(fields: Record<string, string | undefined>, defaultType?: TogetherFileType) {
    const purpose = fields.purpose as TogetherPurpose | undefined;
    if (!purpose || !PURPOSES.includes(purpose)) throw apiError(400, `Invalid purpose: must be one of ${PURPOSES.join(', ')}`, 'purpose');
    if (!fields.file_name) throw apiError(400, 'file_name is required', 'file_name');
    const fileType = (fields.file_type || defaultType) as TogetherFileType | undefined;
    if (!fileType || !FILE_TYPES.includes(fileType)) throw apiError(400, `Invalid file_type: must be one of ${FILE_TYPES.join(', ')}`, 'file_type');
    return { purpose, filename: fields.file_name, fileType };
  }

  /** The SDK flow's first step: a 302 to a presigned URL on this server, and the file id to come. */
  async function startUpload(req: http.IncomingMessage, query: URLSearchParams): Promise<FakeReply> {
    const { purpose, filename, fileType } = checkUploadFields(await uploadFields(req, query));
    const token = randomBytes(24).toString('base64url');
    const file = newFile(filename, purpose, fileType);
    presigned.set(token, { file, expiresAt: Date.now() + presignedTtlMs });
    return { status: 302, headers: { location: `${origin}/__presigned/${token}`, 'x-together-file-id': file.id } };
  }

  async function receivePresigned(req: http.IncomingMessage, token: string): Promise<FakeReply> {
    const upload = presigned.get(token);
    if (req.method !== 'PUT' || !upload) throw bucketError('AccessDenied', 'Access Denied');
    if (Date.now() > upload.expiresAt) {
      presigned.delete(token);
      throw bucketError('AccessDenied', 'Request has expired');
    }
    const content = await readBody(req);
    storeFile(upload.file, content);
    return { status: 200, headers: { etag: `"${randomBytes(16).toString('hex')}"` } };
  }

  async function multipartUpload(req: http.IncomingMessage): Promise<TogetherFile> {
    const { fields, files } = await readMultipart(req, (message) => apiError(400, message));
    const { purpose, filename, fileType } = checkUploadFields(fields, 'jsonl');
    if (!files.file) throw apiError(400, 'file is required', 'file');
    return storeFile(newFile(filename, purpose, fileType), files.file.content);
  }

  function findFile(id: string): TogetherFile {
    const file = state.files.get(id);
    if (!file) throw apiError(404, `File not found: ${id}`, 'id', 'not_found');
    return file;
  }

  /** One validation step (read, or preprocess): PENDING → RUNNING → COMPLETED or INVALID_FORMAT. */
  function processStep(file: TogetherFile) {
    if (file.processing_status === 'PENDING') file.processing_status = 'RUNNING';
    else if (file.processing_status === 'RUNNING') finishValidation(file);
  }

  function finishValidation(file: TogetherFile) {
    const report = file.FileType === 'jsonl' ? inspectJsonl(state.fileContents.get(file.id)!) : undefined;
    const empty = report && report.examples === 0 ? 'The file has no examples' : undefined;
    const error = report?.error ? `Line ${report.error.line}: ${report.error.message}` : empty;
    file.validation_report = {
      valid: !error,
      file_id: file.id,
      nlines: report?.examples ?? 0,
      ...(report?.shape ? { dataset_format: DATASET_FORMATS[report.shape] } : {}),
      dataset_has_tools: false,
      dataset_is_multimodal: false,
      ...(error ? { error, error_type: 'INVALID_FORMAT' as const } : {}),
    };
    file.processing_status = error ? 'INVALID_FORMAT' : 'COMPLETED';
  }

  /** A file a job may train on: it exists, is for fine-tuning, and validates (validation is finished now if it was still running). */
  function usableFile(id: unknown, param: string): TogetherFile {
    const file = typeof id === 'string' ? state.files.get(id) : undefined;
    if (!file) throw apiError(400, `${param} not found: ${String(id)}`, param);
    if (file.purpose !== 'fine-tune') throw apiError(400, `${param} must be a file uploaded with purpose "fine-tune"`, param);
    if (file.processing_status !== 'COMPLETED' && file.processing_status !== 'INVALID_FORMAT') finishValidation(file);
    if (file.processing_status === 'INVALID_FORMAT') throw apiError(400, `${param} ${file.id} is not valid: ${file.validation_report!.error}`, param);
    return file;
  }

  // ---- fine-tunes ----

  function event(job: TogetherJob, type: string, message: string, extra: Partial<TogetherEvent> = {}) {
    job.events.push({
      object: 'fine-tune-event',
      created_at: isoNow(),
      level: type === 'job_error' ? 'error' : 'info',
      message,
      type,
      param_count: job.param_count,
      token_count: job.token_count,
      total_steps: stepsPerEpoch(job) * job.n_epochs,
      wandb_url: '',
      step: 0,
      checkpoint_path: '',
      model_path: '',
      training_offset: 0,
      hash: '',
      ...extra,
    });
  }

  const stepsPerEpoch = (job: TogetherJob) => Math.max(1, Math.ceil(job.trainingfile_numlines / job.batch_size));

  function createJob(body: Record<string, unknown>): TogetherJob {
    state.fineTuneRequests.push(body);
    if (typeof body.model !== 'string' || !body.model) throw apiError(400, 'model is required', 'model');
    if (typeof body.training_file !== 'string' || !body.training_file) throw apiError(400, 'training_file is required', 'training_file');
    checkFineTuneParams(body);
    if (!fineTuneModels.has(body.model)) throw apiError(400, `The model ${body.model} is not supported for fine-tuning`, 'model');
    const training = usableFile(body.training_file, 'training_file');
    if (body.validation_file !== undefined) usableFile(body.validation_file, 'validation_file');
    const id = `ft-${randomUUID()}`;
    const suffix = body.suffix as string | undefined;
    const outputName = `${userId}/${body.model.split('/').pop()}${suffix ? `-${suffix}` : ''}-${randomBytes(4).toString('hex')}`;
    const now = isoNow();
    const trainingType = body.training_type as Record<string, unknown> | null | undefined;
    const job: TogetherJob = {
      id,
      status: 'pending',
      created_at: now,
      updated_at: now,
      user_id: userId,
      owner_address: `${userId}@example.com`,
      model: body.model,
      model_output_name: outputName,
      model_output_path: `s3://together-fake-models/finetune/${id}/${outputName}`,
      ...(suffix !== undefined ? { suffix } : {}),
      training_file: training.id,
      ...(body.validation_file !== undefined ? { validation_file: body.validation_file as string } : {}),
      trainingfile_numlines: training.validation_report?.nlines ?? 0,
      trainingfile_size: training.bytes,
      n_epochs: (body.n_epochs as number) ?? 1,
      n_checkpoints: (body.n_checkpoints as number) ?? 1,
      n_evals: (body.n_evals as number) ?? 0,
      batch_size: body.batch_size === undefined || body.batch_size === 'max' ? MAX_BATCH_SIZE : (body.batch_size as number),
      learning_rate: (body.learning_rate as number) ?? 0.00001,
      lr_scheduler: (body.lr_scheduler as Record<string, unknown>) ?? { lr_scheduler_type: 'linear', lr_scheduler_args: { min_lr_ratio: 0 } },
      warmup_ratio: (body.warmup_ratio as number) ?? 0,
      max_grad_norm: (body.max_grad_norm as number) ?? 1,
      weight_decay: (body.weight_decay as number) ?? 0,
      random_seed: (body.random_seed as number | undefined) ?? null,
      packing: (body.packing as boolean) ?? true,
      training_type: trainingType?.type === 'Full' ? { type: 'Full' } : { ...LORA_DEFAULTS, ...(trainingType ?? {}) },
      training_method: (body.training_method as Record<string, unknown>) ?? { method: 'sft', train_on_inputs: 'auto' },
      ...(body.wandb_project_name !== undefined ? { wandb_project_name: body.wandb_project_name as string } : {}),
      ...(body.wandb_name !== undefined ? { wandb_name: body.wandb_name as string } : {}),
      token_count: 0,
      param_count: 0,
      total_price: 0,
      epochs_completed: 0,
      queue_depth: 0,
      events: [],
      progress: { estimate_available: false, seconds_remaining: 0 },
    };
    state.jobs.set(id, job);
    state.checkpoints.set(id, []);
    state.metrics.set(id, []);
    event(job, 'job_pending', 'Fine tune request created');
    return job;
  }

  /** Create, list and cancel answer the job without its events and output details. */
  function truncated(job: TogetherJob): Partial<TogetherJob> {
    const view: Partial<TogetherJob> = { ...job };
    for (const key of FULL_ONLY) delete view[key];
    return view;
  }

  function findJob(id: string): TogetherJob {
    const job = state.jobs.get(id);
    if (!job) throw apiError(404, `Fine-tune job not found: ${id}`, 'id', 'not_found');
    return job;
  }

  function setStatus(job: TogetherJob, status: TogetherJobStatus) {
    job.status = status;
    job.updated_at = isoNow();
  }

  /** One lifecycle step, taken when the job is read. */
  function advance(job: TogetherJob) {
    const failure = failures.get(job.id);
    if (failure !== undefined && !TERMINAL.has(job.status)) {
      failures.delete(job.id);
      setStatus(job, 'error');
      return event(job, 'job_error', failure);
    }
    switch (job.status) {
      case 'pending':
        return setStatus(job, 'queued');
      case 'queued':
        setStatus(job, 'running');
        job.started_at = job.updated_at;
        job.param_count = 8_030_261_248;
        event(job, 'job_start', 'Job started');
        return event(job, 'training_start', 'Training started');
      case 'running':
        return job.epochs_completed < job.n_epochs ? completeEpoch(job) : compress(job);
      case 'compressing':
        setStatus(job, 'uploading');
        event(job, 'model_compression_complete', 'Model compression complete');
        return event(job, 'model_uploading', 'Uploading model');
      case 'uploading':
        return complete(job);
      case 'cancel_requested':
        setStatus(job, 'cancelled');
        return event(job, 'job_stopped', 'Job stopped');
    }
  }

  /** One epoch of training: its metrics, a checkpoint while checkpoints remain to be taken, the epoch event. */
  function completeEpoch(job: TogetherJob) {
    const epoch = ++job.epochs_completed;
    const step = epoch * stepsPerEpoch(job);
    job.token_count += Math.ceil(job.trainingfile_size / 4);
    job.updated_at = isoNow();
    const loss = Number((1.5 / (epoch + 1)).toFixed(4));
    state.metrics.get(job.id)!.push({ 'train/loss': loss, 'train/learning_rate': job.learning_rate, 'train/global_step': step, 'train/epoch': epoch });
    const checkpoints = state.checkpoints.get(job.id)!;
    if (epoch < job.n_epochs && checkpoints.length < job.n_checkpoints - 1) {
      const path = `${job.model_output_path}-step-${step}`;
      checkpoints.push({ step, path, created_at: job.updated_at, checkpoint_type: `Intermediate checkpoint (step ${step})`, checkpoint: 'adapter' });
      event(job, 'checkpoint_save', `Checkpoint saved at step ${step}`, { step, checkpoint_path: path });
    }
    event(job, 'epoch_complete', `Epoch ${epoch}/${job.n_epochs} complete`, { step });
  }

  function compress(job: TogetherJob) {
    setStatus(job, 'compressing');
    event(job, 'training_complete', 'Training complete', { step: stepsPerEpoch(job) * job.n_epochs });
    event(job, 'model_compressing', 'Compressing model');
  }

  function complete(job: TogetherJob) {
    setStatus(job, 'completed');
    const step = stepsPerEpoch(job) * job.n_epochs;
    job.total_price = Math.round(job.token_count * job.n_epochs * 0.0005);
    state.checkpoints.get(job.id)!.push({
      step,
      path: job.model_output_path,
      created_at: job.updated_at,
      checkpoint_type: `Final checkpoint (step ${step})`,
      checkpoint: 'adapter',
    });
    event(job, 'model_upload_complete', 'Model upload complete', { model_path: job.model_output_path });
    event(job, 'job_complete', `Job finished: ${job.model_output_name}`, { model_path: job.model_output_path, step });
  }

  function cancel(job: TogetherJob) {
    if (TERMINAL.has(job.status)) throw apiError(400, `Job ${job.id} has already finished (status: ${job.status}) and cannot be cancelled`, 'id');
    if (job.status !== 'cancel_requested') {
      setStatus(job, 'cancel_requested');
      event(job, 'cancel_requested', 'Cancellation requested');
    }
    return truncated(job);
  }

  /** Metrics in order, filtered by `global_step_from`/`global_step_to` when given. */
  function metrics(job: TogetherJob, query: URLSearchParams) {
    const from = Number(query.get('global_step_from') ?? -Infinity);
    const to = Number(query.get('global_step_to') ?? Infinity);
    if (Number.isNaN(from) || Number.isNaN(to)) throw apiError(400, 'global_step_from and global_step_to must be integers');
    return { metrics: state.metrics.get(job.id)!.filter((m) => m['train/global_step'] >= from && m['train/global_step'] <= to) };
  }

  // ---- chat ----

  /** Whether `model` answers chat: a base model, or the output of a completed job. */
  function servable(model: string): boolean {
    return chatModels.has(model) || [...state.jobs.values()].some((j) => j.status === 'completed' && j.model_output_name === model);
  }

  const batches = togetherBatches({
    userId,
    files: {
      content: (id) => {
        const file = state.files.get(id);
        return file && { purpose: file.purpose, content: state.fileContents.get(id)! };
      },
      store: (filename, purpose, content) => storeFile(newFile(filename, purpose, 'jsonl'), content),
    },
    servable: (model) => servable(model),
    error: (status, message, param) => apiError(status, message, param ?? null),
  });

  /** `GET /v1/models`: a bare array, Together's shape (`type`, `organization`), with an embedding model that has no chat. */
  function listModels() {
    const model = (id: string, type: string) => ({ id, object: 'model', created: 1_710_000_000, type, display_name: id, organization: id.split('/')[0] });
    return [...[...chatModels].map((id) => model(id, 'chat')), model('BAAI/bge-large-en-v1.5', 'embedding')];
  }

  // ---- routing ----

  async function api(req: http.IncomingMessage, res: http.ServerResponse, url: URL): Promise<FakeReply | void> {
    const ok = (body: unknown): FakeReply => ({ status: 200, body });
    const path = url.pathname;
    const method = req.method;
    if (path === '/v1/chat/completions' && method === 'POST') {
      return answerChat(req, res, {
        servable,
        invalid: (message, param) => apiError(400, message, param),
        notFound: (model) => {
          const message = `Unable to access model ${model}. Please visit https://api.together.ai/models to view the list of supported models.`;
          return apiError(404, message, null, 'model_not_available');
        },
        record: (body) => state.chatRequests.push(body),
        delayMs: opts.streamDelayMs,
        onAbandoned: () => state.abandonedStreams++,
      });
    }
    if (path === '/v1/models' && method === 'GET') return ok(listModels());
    if (path === '/v1/files') {
      if (method === 'POST') return startUpload(req, url.searchParams);
      if (method === 'GET') return ok({ data: [...state.files.values()] });
    }
    if (path === '/v1/files/upload' && method === 'POST') return ok(await multipartUpload(req));
    let m = /^\/v1\/files\/([^/]+)(\/content|\/preprocess)?$/.exec(path);
    if (m) {
      const file = findFile(decodeURIComponent(m[1]));
      const action = `${method} ${m[2] ?? ''}`;
      if (action === 'GET ' || action === 'POST /preprocess') {
        processStep(file);
        return ok(file);
      }
      if (action === 'GET /content') return { status: 200, body: state.fileContents.get(file.id)!, headers: { 'content-type': 'text/plain' } };
      if (action === 'DELETE ') {
        state.files.delete(file.id);
        state.fileContents.delete(file.id);
        return ok({ id: file.id, deleted: true });
      }
    }
    if (path === '/v1/batches') {
      if (method === 'POST') return { status: 201, body: batches.create(await readJsonObject(req, () => apiError(400, 'Invalid JSON body'))) };
      if (method === 'GET') return ok(batches.list());
    }
    const batchReply = batchByIdReply(method, path, '/v1', () => batches);
    if (batchReply) return batchReply;
    if (path === '/v1/fine-tunes') {
      if (method === 'POST') return ok(truncated(createJob(await readJsonObject(req, () => apiError(400, 'Invalid JSON body')))));
      if (method === 'GET') return ok({ data: [...state.jobs.values()].map(truncated) });
    }
    m = /^\/v1\/fine-tunes\/([^/]+)(\/cancel|\/events|\/checkpoints|\/metrics)?$/.exec(path);
    if (m) {
      const job = findJob(decodeURIComponent(m[1]));
      switch (`${method} ${m[2] ?? ''}`) {
        case 'GET ':
          advance(job);
          return ok(job);
        case 'DELETE ':
          state.jobs.delete(job.id);
          return ok({ message: `Fine-tune job ${job.id} deleted` });
        case 'POST /cancel':
          return ok(cancel(job));
        case 'GET /events':
          return ok({ data: job.events });
        case 'GET /checkpoints':
          return ok({ data: state.checkpoints.get(job.id) });
        case 'GET /metrics':
          return ok(metrics(job, url.searchParams));
      }
    }
    throw apiError(404, `Unknown endpoint: ${method} ${path}`, null, 'not_found');
  }

  const server = await startFakeServer({
    renderError,
    injectedError: (status, o, url) => injectedError(status, o.message, url.pathname),
    async route(req, res, url) {
      const presignedUpload = /^\/__presigned\/([^/]+)$/.exec(url.pathname);
      if (presignedUpload) return receivePresigned(req, presignedUpload[1]);
      if (bearerToken(req) !== apiKey) {
        throw apiError(401, 'Invalid API key provided. You can find your API key at https://api.together.xyz/settings/api-keys.', null, 'invalid_api_key');
      }
      return api(req, res, url);
    },
  });
  origin = server.origin;
  state.requests = server.requests;

  return {
    /** `http://127.0.0.1:<port>/v1`: the SDK's `baseURL`, and its upload helper's `TOGETHER_API_BASE_URL`. */
    url: `${server.origin}/v1`,
    origin: server.origin,
    apiKey,
    state,
    /** The Batch API (`/v1/batches`): its batches, and hooks to fail requests, expire or fail a batch. */
    batches,
    /** The job goes to `error` (with a `job_error` event) at its next GET. */
    failJob(id: string, message = 'Training failed: CUDA out of memory') {
      findJob(id);
      failures.set(id, message);
    },
    /** The next `times` (default 1) requests matching method and path prefix fail (429 with `retryAfter` for throttling). */
    failNext: server.failNext,
    /** The next `times` (default 1) matching requests are answered only after `ms`. */
    delayNext: server.delayNext,
    /** The next matching successful JSON answer goes through `reshape` (a field dropped or retyped). */
    reshapeNext: server.reshapeNext,
    close: server.close,
  };
}

export type FakeTogether = Awaited<ReturnType<typeof startFakeTogether>>;
