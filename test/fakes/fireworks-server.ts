/**
 * A fake Fireworks AI for tests, on 127.0.0.1 over real HTTP, speaking Fireworks' three dialects:
 * - the control plane `/v1/accounts/{account}/…` (a gRPC gateway: proto3 JSON bodies that refuse
 *   unknown fields, errors `{code: <gRPC number>, message, details: []}`, lists with `nextPageToken`
 *   and `totalSize`, unset fields sent as zero values);
 * - a signed-URL bucket in the style of Cloud Storage's XML API (errors as `<Error><Code>…`), for the
 *   `:getUploadEndpoint` upload path;
 * - the OpenAI-compatible inference API `/inference/v1/chat/completions` (errors `{error: {…}}`).
 *
 * Datasets are created `UPLOADING` and become `READY` once their bytes validate (chat JSONL, 3 or more
 * examples). Supervised fine-tuning jobs advance one step per GET of the job
 * (CREATING → VALIDATING → RUNNING with `jobProgress.percent` rising → WRITING_RESULTS → COMPLETED,
 * which creates the output model); `failJob` forces FAILED. As on the real REST API there is no cancel:
 * DELETE removes a job. A fine-tuned model answers chat only once deployed (`POST …/deployedModels` or
 * `deploy()`); base models `accounts/fireworks/models/<id>` answer directly. A dataset of
 * `{custom_id, body}` lines is batch inference input, run by `batchInferenceJobs` (fireworks-batch.ts).
 */
import { createHash, createHmac, randomBytes, randomUUID } from 'node:crypto';
import type http from 'node:http';
import { answerChat } from './chat';
import { BATCH_JOB_SCHEMA, RESOURCE_OUTPUTS, createBatchInferenceJobs, parseBatchRows, type BatchRow } from './fireworks-batch';
import { inspectJsonl, JsonlInspector, type JsonlReport } from './jsonl';
import {
  bearerToken,
  FakeHttpError,
  isoNow,
  readBody,
  readMultipart,
  startFakeServer,
  storageXmlError,
  unixNow,
  type FakeReply,
  type RecordedRequest,
} from './kit';
import { decodeProtoJson, ProtoJsonError, type MessageSchema } from './protojson';

export interface FakeFireworksOptions {
  /** The key `Authorization: Bearer …` must carry (control plane and inference). */
  apiKey?: string;
  /** The only account the key may use under `/v1/accounts/{account}/`. */
  accountId?: string;
  /** Base model ids (under `accounts/fireworks/models/`) that exist, for tuning and for chat. */
  baseModels?: string[];
  /** GETs a job spends RUNNING, its `jobProgress.percent` rising to 100 (default 3). */
  runningPolls?: number;
  /** Pause between streamed chat chunks. */
  streamDelayMs?: number;
  /**
   * Signed-URL uploads up to this size are kept in memory (default 64 MiB); larger ones are checked and
   * validated as they stream in and only described, so a test can upload hundreds of MB at flat memory.
   */
  retainUploadBytes?: number;
  /** Rows a RUNNING batch inference job answers per GET (default: all of them). */
  batchRowsPerStep?: number;
}

export type DatasetState = 'STATE_UNSPECIFIED' | 'UPLOADING' | 'READY';

export interface FireworksStatus {
  code: string;
  message: string;
}

export interface FireworksDataset {
  name: string;
  displayName: string;
  createTime: string;
  updateTime: string;
  createdBy: string;
  state: DatasetState;
  status: FireworksStatus;
  /** int64 as a string, as proto3 JSON sends it. */
  exampleCount: string;
  estimatedTokenCount: string;
  averageTurnCount: number;
  format: 'FORMAT_UNSPECIFIED' | 'CHAT' | 'COMPLETION' | 'RL';
  userUploaded: Record<string, never> | null;
  externalUrl: string;
  sourceJobName: string;
  splitted: null;
  transformed: null;
  evaluationResult: null;
}

/** What arrived for one file of a dataset. */
export interface FireworksDatasetFile {
  /** The size announced in `:getUploadEndpoint` (absent for a direct `:upload`). */
  declaredSize?: number;
  /** The bytes received, exactly (up to `retainUploadBytes`; larger uploads are described by `received`). */
  content?: Buffer;
  /** A signed-URL upload too large to keep: what arrived, validated as it streamed in. */
  received?: { bytes: number; sha256: string };
  via: 'upload' | 'signedUrl';
}

export type JobState =
  | 'JOB_STATE_CREATING'
  | 'JOB_STATE_VALIDATING'
  | 'JOB_STATE_RUNNING'
  | 'JOB_STATE_WRITING_RESULTS'
  | 'JOB_STATE_COMPLETED'
  | 'JOB_STATE_FAILED'
  | 'JOB_STATE_DELETING';

export interface FireworksSftJob {
  name: string;
  displayName: string;
  createTime: string;
  updateTime: string;
  completedTime: string | null;
  createdBy: string;
  dataset: string;
  evaluationDataset: string;
  evalAutoCarveout: boolean;
  state: JobState;
  status: FireworksStatus;
  baseModel: string;
  warmStartFrom: string;
  outputModel: string;
  epochs: number;
  learningRate: number;
  loraRank: number;
  batchSize: number;
  batchSizeSamples: number;
  maxContextLength: number;
  earlyStop: boolean;
  jobProgress: { percent: number; epoch: number; inputTokens: number } | null;
  metricsFileSignedUrl: string;
  trainerLogsSignedUrl: string;
  wandbConfig: Record<string, unknown> | null;
}

export interface FireworksModel {
  name: string;
  displayName: string;
  kind: 'HF_PEFT_ADDON';
  state: 'READY';
  status: FireworksStatus;
  createTime: string;
  updateTime: string;
  fineTuningJob: string;
  peftDetails: { baseModel: string; r: number; targetModules: string[] };
}

export interface FireworksDeployedModel {
  name: string;
  model: string;
  deployment: string;
  displayName: string;
  description: string;
  default: boolean;
  public: boolean;
  serverless: boolean;
  state: 'DEPLOYED';
  status: FireworksStatus;
  createTime: string;
  updateTime: string;
}

const DEFAULT_BASE_MODELS = ['llama-v3p1-8b-instruct', 'llama-v3p3-70b-instruct', 'qwen2p5-7b-instruct'];
/** Fireworks resource ids: 1-63 of `[a-z0-9-]`, no hyphen at either end. */
const RESOURCE_ID = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
const BUCKET = 'fireworks-fake-dataset-uploads';
/** Fewer examples than this and validation refuses the dataset (Fireworks' documented minimum). */
const MIN_EXAMPLES = 3;
const OK: FireworksStatus = { code: 'OK', message: '' };

// ---- error dialects ------------------------------------------------------------------------

/** gRPC codes the control plane uses, with the HTTP status the gateway maps each to. */
const GRPC = {
  INVALID_ARGUMENT: [3, 400],
  NOT_FOUND: [5, 404],
  ALREADY_EXISTS: [6, 409],
  PERMISSION_DENIED: [7, 403],
  RESOURCE_EXHAUSTED: [8, 429],
  FAILED_PRECONDITION: [9, 400],
  INTERNAL: [13, 500],
  UNAVAILABLE: [14, 503],
  UNAUTHENTICATED: [16, 401],
} as const;
type GrpcCode = keyof typeof GRPC;

const controlError = (code: GrpcCode, message: string) => new FakeHttpError(GRPC[code][1], message, { dialect: 'control', code: GRPC[code][0] });
const inferenceError = (status: number, message: string, code: string, param: string | null = null, type = 'error') =>
  new FakeHttpError(status, message, { dialect: 'inference', code, param, type });
const bucketError = (status: number, code: string, message: string, details?: string) =>
  new FakeHttpError(status, message, { dialect: 'bucket', code, details });

function renderError(e: FakeHttpError): FakeReply {
  const d = e.details;
  if (d.dialect === 'inference') return { status: e.status, body: { error: { message: e.message, param: d.param ?? null, code: d.code, type: d.type } } };
  if (d.dialect === 'bucket') return storageXmlError(e.status, String(d.code), e.message, typeof d.details === 'string' ? { Details: d.details } : {});
  const code = typeof d.code === 'number' ? d.code : GRPC.INTERNAL[0];
  return { status: e.status, body: { code, message: e.message, details: [] } };
}

/** An injected failure in the dialect of the path it hits. */
function injectedError(status: number, message: string | undefined, path: string): FakeHttpError {
  if (path.startsWith('/inference/')) {
    return status === 429
      ? inferenceError(429, message ?? 'Request rate limit exceeded', 'RATE_LIMITED')
      : inferenceError(status, message ?? 'Internal server error', status >= 500 ? 'INTERNAL_SERVER_ERROR' : 'INVALID_REQUEST');
  }
  if (path.startsWith(`/${BUCKET}/`)) return bucketError(status, status === 429 ? 'SlowDown' : 'InternalError', message ?? 'We encountered an internal error.');
  const code = (Object.keys(GRPC) as GrpcCode[]).find((c) => GRPC[c][1] === status) ?? 'INTERNAL';
  return new FakeHttpError(status, message ?? (status === 429 ? 'rate limit exceeded' : 'internal error'), { dialect: 'control', code: GRPC[code][0] });
}

// ---- request schemas (proto3 JSON field names) ------------------------------------------------

const DATASET_SCHEMA: MessageSchema = {
  displayName: 'string',
  userUploaded: { message: {} },
  externalUrl: 'string',
  format: { enum: ['FORMAT_UNSPECIFIED', 'CHAT', 'COMPLETION', 'RL'] },
  exampleCount: 'int64',
  ...RESOURCE_OUTPUTS,
  estimatedTokenCount: 'output',
};
const CREATE_DATASET_SCHEMA: MessageSchema = { datasetId: 'string', dataset: { message: DATASET_SCHEMA }, sourceDatasetId: 'string', filter: 'string' };
const UPLOAD_ENDPOINT_SCHEMA: MessageSchema = { filenameToSize: { map: 'int64' }, readMask: 'string' };
const WANDB_SCHEMA: MessageSchema = { enabled: 'bool', apiKey: 'string', project: 'string', entity: 'string', runId: 'string', url: 'output' };
const SFT_JOB_SCHEMA: MessageSchema = {
  dataset: 'string',
  displayName: 'string',
  baseModel: 'string',
  warmStartFrom: 'string',
  outputModel: 'string',
  evaluationDataset: 'string',
  evalAutoCarveout: 'bool',
  epochs: 'int32',
  learningRate: 'double',
  learningRateWarmupSteps: 'int32',
  loraRank: 'int32',
  batchSize: 'int32',
  batchSizeSamples: 'int32',
  gradientAccumulationSteps: 'int32',
  maxContextLength: 'int32',
  earlyStop: 'bool',
  isTurbo: 'bool',
  jinjaTemplate: 'string',
  optimizerWeightDecay: 'double',
  usePurpose: 'string',
  nodes: 'int32',
  region: 'string',
  wandbConfig: { message: WANDB_SCHEMA },
  awsS3Config: { message: { credentialsSecret: 'string', iamRoleArn: 'string' } },
  azureBlobStorageConfig: { message: { credentialsSecret: 'string', managedIdentityClientId: 'string', tenantId: 'string' } },
  metricsFileSignedUrl: 'string',
  ...RESOURCE_OUTPUTS,
  completedTime: 'output',
  jobProgress: 'output',
  estimatedCost: 'output',
  trainerLogsSignedUrl: 'output',
};
const DEPLOYED_MODEL_SCHEMA: MessageSchema = {
  model: 'string',
  deployment: 'string',
  displayName: 'string',
  description: 'string',
  default: 'bool',
  public: 'bool',
  serverless: 'bool',
  name: 'output',
  state: 'output',
  status: 'output',
  createTime: 'output',
  updateTime: 'output',
};

/** A percent-decoded path part; an undecodable one names nothing the gateway routes. */
function decodePath(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw controlError('NOT_FOUND', 'Not Found');
  }
}

/** The order `orderBy` asks for: by name (the API's default), or by creation time (`createTime [asc|desc]`). */
function ordering<T extends { name: string; createTime: string }>(orderBy: string | null): (a: T, b: T) => number {
  const byName = (a: T, b: T) => a.name.localeCompare(b.name);
  const m = /^\s*createTime(?:\s+(asc|desc))?\s*$/.exec(orderBy ?? '');
  if (!orderBy?.trim()) return byName;
  if (!m) throw controlError('INVALID_ARGUMENT', `invalid order_by "${orderBy}": this fake orders by name or createTime only`);
  const direction = m[1] === 'desc' ? -1 : 1;
  return (a, b) => direction * a.createTime.localeCompare(b.createTime) || byName(a, b);
}

/** A list filter (AIP-160): this fake takes `create_time < "<RFC 3339>"` only. */
function createdBefore<T extends { createTime: string }>(filter: string | null): (item: T) => boolean {
  if (!filter?.trim()) return () => true;
  const m = /^\s*create_time\s*<\s*"([^"]+)"\s*$/.exec(filter);
  if (!m || Number.isNaN(Date.parse(m[1]))) throw controlError('INVALID_ARGUMENT', `invalid filter "${filter}": this fake takes create_time < "<time>" only`);
  const before = Date.parse(m[1]);
  return (item) => Date.parse(item.createTime) < before;
}

/** A list page in the gateway's shape, sorted as `orderBy` asks (by name by default), with an opaque token. */
function page<T extends { name: string; createTime: string }>(items: Iterable<T>, query: URLSearchParams, key: string) {
  const raw = query.get('pageSize');
  if (raw !== null && !/^-?\d+$/.test(raw)) {
    throw controlError('INVALID_ARGUMENT', `type mismatch, parameter: page_size, error: strconv.ParseInt: parsing "${raw}": invalid syntax`);
  }
  const requested = Number(raw ?? 0);
  const pageSize = requested <= 0 ? 50 : Math.min(requested, 200);
  const token = query.get('pageToken') ?? '';
  let offset = 0;
  if (token) {
    const decoded = /^o(\d+)$/.exec(Buffer.from(token, 'base64url').toString('utf8'));
    if (!decoded) throw controlError('INVALID_ARGUMENT', 'invalid page token');
    offset = Number(decoded[1]);
  }
  const sorted = [...items].filter(createdBefore<T>(query.get('filter'))).sort(ordering<T>(query.get('orderBy')));
  const slice = sorted.slice(offset, offset + pageSize);
  const next = offset + pageSize < sorted.length ? Buffer.from(`o${offset + pageSize}`).toString('base64url') : '';
  return { [key]: slice, nextPageToken: next, totalSize: sorted.length };
}

export async function startFakeFireworks(opts: FakeFireworksOptions = {}) {
  const apiKey = opts.apiKey ?? 'fw-test-fake-key';
  const account = opts.accountId ?? 'fake-account';
  const baseModels = new Set((opts.baseModels ?? DEFAULT_BASE_MODELS).map((id) => `accounts/fireworks/models/${id}`));
  const runningPolls = opts.runningPolls ?? 3;
  const signingKey = randomBytes(32);
  /** Where signed URLs point: the fake's own origin, or another a test chose (`signUrlsOn`). */
  let bucketOrigin = '';

  const state = {
    /** By dataset id. */
    datasets: new Map<string, FireworksDataset>(),
    /** By dataset id, then file name: what was declared and what arrived. */
    datasetFiles: new Map<string, Map<string, FireworksDatasetFile>>(),
    /** By job id. */
    jobs: new Map<string, FireworksSftJob>(),
    /** Output models of completed jobs, by resource name (`accounts/{a}/models/{id}`). */
    models: new Map<string, FireworksModel>(),
    /** By resource name (`accounts/{a}/deployedModels/{id}`). */
    deployedModels: new Map<string, FireworksDeployedModel>(),
    /** Every chat-completion request body received. */
    chatRequests: [] as Record<string, unknown>[],
    /** Streams the client left before the end. */
    abandonedStreams: 0,
    /** Every request the fake received (filled by the kit). */
    requests: [] as RecordedRequest[],
  };
  /** Jobs told to fail on their next GET, with the message. */
  const failures = new Map<string, string>();
  /** How many GETs each running job has spent RUNNING. */
  const runningSteps = new Map<string, number>();
  /** Signed upload URLs issued, by signature. */
  const signedUploads = new Map<string, { datasetId: string; filename: string; size: number }>();
  /** Signed download URLs issued, by signature. */
  const signedDownloads = new Map<string, { datasetId: string; filename: string }>();
  /** The validation of uploads too large to keep, made while they streamed in. */
  const streamedReports = new WeakMap<FireworksDatasetFile, JsonlReport>();
  const retainUploadBytes = opts.retainUploadBytes ?? 64 * 1024 * 1024;

  /** Datasets of batch-request lines (`{custom_id, body}`), by id: their rows, for batch inference jobs. */
  const batchDatasets = new Map<string, BatchRow[]>();

  const datasetName = (id: string) => `accounts/${account}/datasets/${id}`;
  const jobName = (id: string) => `accounts/${account}/supervisedFineTuningJobs/${id}`;

  async function readProto(req: http.IncomingMessage, schema: MessageSchema) {
    const text = (await readBody(req)).toString('utf8');
    try {
      return decodeProtoJson(text, schema);
    } catch (e) {
      if (e instanceof ProtoJsonError) throw controlError('INVALID_ARGUMENT', e.message);
      throw e;
    }
  }

  function findDataset(id: string): FireworksDataset {
    const dataset = state.datasets.get(id);
    if (!dataset) throw controlError('NOT_FOUND', `Dataset "${datasetName(id)}" not found`);
    return dataset;
  }

  /** The id in `accounts/{account}/{collection}/{id}`, or undefined when the name is not of that form. */
  function idIn(name: string, collection: string): string | undefined {
    const m = new RegExp(`^accounts/([^/]+)/${collection}/([^/]+)$`).exec(name);
    return m && m[1] === account ? m[2] : undefined;
  }

  // ---- datasets ----

  function createDataset(body: Record<string, unknown>): FireworksDataset {
    const id = body.datasetId;
    if (typeof id !== 'string' || !id) throw controlError('INVALID_ARGUMENT', 'dataset_id is required');
    if (!RESOURCE_ID.test(id)) {
      throw controlError('INVALID_ARGUMENT', `invalid dataset id "${id}": 1-63 lowercase letters, digits or hyphens, no hyphen at either end`);
    }
    if (!body.dataset) throw controlError('INVALID_ARGUMENT', 'dataset is required');
    if (state.datasets.has(id)) throw controlError('ALREADY_EXISTS', 'dataset ID already exists');
    const spec = body.dataset as Record<string, unknown>;
    const now = isoNow();
    const dataset: FireworksDataset = {
      name: datasetName(id),
      displayName: (spec.displayName as string) ?? '',
      createTime: now,
      updateTime: now,
      createdBy: 'fake-user@example.com',
      state: 'UPLOADING',
      status: OK,
      exampleCount: '0',
      estimatedTokenCount: '0',
      averageTurnCount: 0,
      format: 'FORMAT_UNSPECIFIED',
      userUploaded: spec.userUploaded ? {} : null,
      externalUrl: (spec.externalUrl as string) ?? '',
      sourceJobName: '',
      splitted: null,
      transformed: null,
      evaluationResult: null,
    };
    state.datasets.set(id, dataset);
    state.datasetFiles.set(id, new Map());
    return dataset;
  }

  /** Validates the received bytes as Fireworks does and makes the dataset READY, or refuses them. */
  function validateDataset(id: string, dataset: FireworksDataset) {
    const files = [...state.datasetFiles.get(id)!.values()];
    if (acceptBatchRequests(id, dataset, files)) return;
    const reports = files.map((f) => (f.content ? inspectJsonl(f.content) : streamedReports.get(f)));
    if (files.length === 0 || reports.some((r) => !r)) {
      throw controlError('FAILED_PRECONDITION', `dataset "${dataset.name}" has no uploaded data yet`);
    }
    let examples = 0;
    let tokens = 0;
    let turns = 0;
    let format: FireworksDataset['format'] = 'FORMAT_UNSPECIFIED';
    for (const report of reports as JsonlReport[]) {
      if (report.error) throw controlError('INVALID_ARGUMENT', `invalid dataset: line ${report.error.line}: ${report.error.message}`);
      if (report.shape === 'text') throw controlError('INVALID_ARGUMENT', 'invalid dataset: examples must have "messages" (or "prompt" and "completion")');
      examples += report.examples;
      tokens += report.estimatedTokens;
      turns += report.averageTurns * report.examples;
      format = report.shape === 'completion' ? 'COMPLETION' : 'CHAT';
    }
    if (examples < MIN_EXAMPLES) throw controlError('INVALID_ARGUMENT', `invalid dataset: it has ${examples} examples, at least ${MIN_EXAMPLES} are required`);
    Object.assign(dataset, {
      state: 'READY',
      format,
      exampleCount: String(examples),
      estimatedTokenCount: String(tokens),
      averageTurnCount: examples ? turns / examples : 0,
      updateTime: isoNow(),
    });
  }

  /** A dataset of batch-request lines becomes READY as batch inference input (any number of rows); false for other datasets. */
  function acceptBatchRequests(id: string, dataset: FireworksDataset, files: FireworksDatasetFile[]): boolean {
    const parsed = files.map((f) => (f.content ? parseBatchRows(f.content) : undefined));
    if (parsed.length === 0 || parsed.some((p) => p === undefined)) return false;
    const rows: BatchRow[] = [];
    for (const p of parsed) {
      if ('error' in p!) throw controlError('INVALID_ARGUMENT', `invalid batch input dataset: ${p.error}`);
      rows.push(...p!.rows);
    }
    // An OpenAI batch file is a READY dataset, but no job's input.
    if (!parsed.some((p) => p && 'openai' in p)) batchDatasets.set(id, rows);
    Object.assign(dataset, { state: 'READY', exampleCount: String(rows.length), updateTime: isoNow() });
    return true;
  }

  function requireUploading(dataset: FireworksDataset) {
    if (dataset.state === 'READY') throw controlError('FAILED_PRECONDITION', `dataset "${dataset.name}" is already uploaded`);
  }

  async function uploadDataset(req: http.IncomingMessage, id: string) {
    const dataset = findDataset(id);
    requireUploading(dataset);
    const { files } = await readMultipart(req, (message) => controlError('INVALID_ARGUMENT', message));
    if (!files.file) throw controlError('INVALID_ARGUMENT', 'file is required');
    const { filename, content } = files.file;
    const received = state.datasetFiles.get(id)!;
    received.clear();
    received.set(filename, { content, via: 'upload' });
    validateDataset(id, dataset);
    return { id, object: 'file', bytes: content.length, created_at: unixNow(), filename, purpose: 'fine-tune' };
  }

  /** Signed `PUT` URLs on this server's fake bucket, one per declared file. */
  function uploadEndpoints(id: string, body: Record<string, unknown>) {
    const dataset = findDataset(id);
    requireUploading(dataset);
    const sizes = (body.filenameToSize ?? {}) as Record<string, number>;
    if (Object.keys(sizes).length === 0) throw controlError('INVALID_ARGUMENT', 'filename_to_size must not be empty');
    const received = state.datasetFiles.get(id)!;
    const urls: Record<string, string> = {};
    for (const [filename, size] of Object.entries(sizes)) {
      if (size <= 0) throw controlError('INVALID_ARGUMENT', `invalid size ${size} for file "${filename}"`);
      received.set(filename, { declaredSize: size, via: 'signedUrl' });
      urls[filename] = signUpload(id, filename, size);
    }
    return { filenameToSignedUrls: urls };
  }

  /** A V4-style signed URL whose signature commits to the object and its exact size. */
  function signUpload(datasetId: string, filename: string, size: number): string {
    return signedUrl(
      datasetId,
      filename,
      (objectPath, date) => `PUT\n${objectPath}\n${size}\n${date}`,
      'host;x-goog-content-length-range',
      (signature) => signedUploads.set(signature, { datasetId, filename, size }),
    );
  }

  /** Signed `GET` URLs for the files of a dataset (`:getDownloadEndpoint`). */
  function downloadEndpoints(id: string) {
    findDataset(id);
    const urls: Record<string, string> = {};
    for (const [filename, file] of state.datasetFiles.get(id)!) {
      if (file.content || file.received) urls[filename] = signDownload(id, filename);
    }
    return { filenameToSignedUrls: urls };
  }

  function signDownload(datasetId: string, filename: string): string {
    return signedUrl(
      datasetId,
      filename,
      (objectPath, date) => `GET\n${objectPath}\n${date}`,
      'host',
      (signature) => signedDownloads.set(signature, { datasetId, filename }),
    );
  }

  /**
   * The bucket URL of a dataset file, signed V4-style over what `signed` lists (it commits to the
   * object path and date); `remember` keeps the signature so the bucket can recognise it.
   */
  function signedUrl(
    datasetId: string,
    filename: string,
    signed: (objectPath: string, date: string) => string,
    signedHeaders: string,
    remember: (signature: string) => void,
  ): string {
    const objectPath = `/${BUCKET}/${account}/${datasetId}/${encodeURIComponent(filename)}`;
    const date = isoNow().replace(/[-:]|\.\d+/g, '');
    const signature = createHmac('sha256', signingKey).update(signed(objectPath, date)).digest('hex');
    remember(signature);
    const query = new URLSearchParams({
      'X-Goog-Algorithm': 'GOOG4-RSA-SHA256',
      'X-Goog-Credential': `fake-uploader@fireworks-fake.iam.gserviceaccount.com/${date.slice(0, 8)}/auto/storage/goog4_request`,
      'X-Goog-Date': date,
      'X-Goog-Expires': '3600',
      'X-Goog-SignedHeaders': signedHeaders,
      'X-Goog-Signature': signature,
    });
    return `${bucketOrigin}${objectPath}?${query}`;
  }

  /** A request to the bucket: a signed download, or a signed upload. */
  async function bucketRequest(req: http.IncomingMessage, url: URL): Promise<FakeReply> {
    const download = req.method === 'GET' ? signedDownloads.get(url.searchParams.get('X-Goog-Signature') ?? '') : undefined;
    if (!download) return receiveSignedUpload(req, url);
    const content = state.datasetFiles.get(download.datasetId)?.get(download.filename)?.content;
    if (!content) throw bucketError(404, 'NoSuchKey', 'The specified key does not exist.');
    return { status: 200, body: content, headers: { 'content-type': 'application/octet-stream' } };
  }

  /**
   * The signed `PUT`, checked as Cloud Storage checks it: the signed `x-goog-content-length-range`
   * header must be present (400 MalformedSecurityHeader) with the signed value (else the signature no
   * longer matches: 403), and the body length must lie in that range (400 EntityTooSmall/TooLarge).
   */
  async function receiveSignedUpload(req: http.IncomingMessage, url: URL): Promise<FakeReply> {
    const upload = signedUploads.get(url.searchParams.get('X-Goog-Signature') ?? '');
    if (req.method !== 'PUT' || !upload) {
      throw bucketError(403, 'SignatureDoesNotMatch', 'Access denied.', 'The request signature we calculated does not match the signature you provided.');
    }
    const range = req.headers['x-goog-content-length-range'];
    if (range === undefined) {
      const details = 'Header was included in signedheaders, but not in the request.';
      throw bucketError(400, 'MalformedSecurityHeader', 'Your request has a malformed header.', details);
    }
    if (range !== `${upload.size},${upload.size}`) {
      throw bucketError(403, 'SignatureDoesNotMatch', 'Access denied.', 'The request signature we calculated does not match the signature you provided.');
    }
    const object = await receiveObject(req, upload.size);
    if (object.bytes > upload.size) {
      const message = 'Your proposed upload is larger than the maximum object size specified in your Policy Document.';
      throw bucketError(400, 'EntityTooLarge', message, 'Content-length exceeds upper bound on range');
    }
    if (object.bytes < upload.size) {
      const message = 'Your proposed upload is smaller than the minimum object size specified in your Policy Document.';
      throw bucketError(400, 'EntityTooSmall', message, 'Content-length is smaller than lower bound on range');
    }
    const file = state.datasetFiles.get(upload.datasetId)?.get(upload.filename);
    if (file && object.content) file.content = object.content;
    if (file && object.report) {
      file.received = { bytes: object.bytes, sha256: object.sha256 };
      streamedReports.set(file, object.report);
    }
    return { status: 200, headers: { etag: `"${object.md5}"`, 'x-goog-stored-content-length': String(object.bytes) } };
  }

  /** An uploaded object, counted and hashed as it streams in; kept when small, else validated on the way and dropped. */
  async function receiveObject(req: http.IncomingMessage, size: number) {
    const md5 = createHash('md5');
    const sha256 = createHash('sha256');
    const keep = size <= retainUploadBytes;
    const inspector = keep ? undefined : new JsonlInspector();
    const chunks: Buffer[] = [];
    let bytes = 0;
    for await (const chunk of req as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      md5.update(chunk);
      sha256.update(chunk);
      if (inspector) inspector.write(chunk);
      else if (bytes <= size) chunks.push(chunk);
    }
    const content = keep ? Buffer.concat(chunks) : undefined;
    return { bytes, md5: md5.digest('hex'), sha256: sha256.digest('hex'), content, report: inspector?.finish() };
  }

  // ---- supervised fine-tuning jobs ----

  function createJob(body: Record<string, unknown>, query: URLSearchParams): FireworksSftJob {
    const id = query.get('supervisedFineTuningJobId') || randomUUID();
    if (!RESOURCE_ID.test(id)) throw controlError('INVALID_ARGUMENT', `invalid supervised fine-tuning job id "${id}"`);
    if (typeof body.dataset !== 'string' || !body.dataset) throw controlError('INVALID_ARGUMENT', 'dataset is required');
    const base = (body.baseModel as string | undefined) ?? '';
    const warmStart = (body.warmStartFrom as string | undefined) ?? '';
    if (!base === !warmStart) throw controlError('INVALID_ARGUMENT', "exactly one of 'base_model' or 'warm_start_from' must be specified");
    if (base && !baseModels.has(base)) throw controlError('NOT_FOUND', `Model "${base}" not found`);
    if (warmStart && !state.models.has(warmStart)) throw controlError('NOT_FOUND', `Model "${warmStart}" not found`);
    requireReadyDataset(body.dataset);
    if (body.evaluationDataset) requireReadyDataset(body.evaluationDataset as string);
    if ((body.epochs as number) < 0) throw controlError('INVALID_ARGUMENT', 'epochs must be positive');
    if ((body.learningRate as number) < 0) throw controlError('INVALID_ARGUMENT', 'learning_rate must be positive');
    const output = outputModelName((body.outputModel as string | undefined) || id);
    if (state.jobs.has(id)) throw controlError('ALREADY_EXISTS', 'supervised fine-tuning job ID already exists');
    if (state.models.has(output) || [...state.jobs.values()].some((j) => j.outputModel === output)) {
      throw controlError('ALREADY_EXISTS', `model "${output}" already exists`);
    }
    const { apiKey: _secret, ...wandb } = (body.wandbConfig as Record<string, unknown> | undefined) ?? {};
    const now = isoNow();
    const job: FireworksSftJob = {
      name: jobName(id),
      displayName: (body.displayName as string) ?? '',
      createTime: now,
      updateTime: now,
      completedTime: null,
      createdBy: 'fake-user@example.com',
      dataset: body.dataset,
      evaluationDataset: (body.evaluationDataset as string) ?? '',
      evalAutoCarveout: (body.evalAutoCarveout as boolean) ?? false,
      state: 'JOB_STATE_CREATING',
      status: OK,
      baseModel: base,
      warmStartFrom: warmStart,
      outputModel: output,
      // Zero means "unset" in proto3: the service fills its defaults.
      epochs: (body.epochs as number) || 1,
      learningRate: (body.learningRate as number) || 0.0001,
      loraRank: (body.loraRank as number) || 8,
      batchSize: (body.batchSize as number) ?? 0,
      batchSizeSamples: (body.batchSizeSamples as number) ?? 0,
      maxContextLength: (body.maxContextLength as number) || 8192,
      earlyStop: (body.earlyStop as boolean) ?? false,
      jobProgress: null,
      metricsFileSignedUrl: '',
      trainerLogsSignedUrl: '',
      wandbConfig: body.wandbConfig ? wandb : null,
    };
    state.jobs.set(id, job);
    return job;
  }

  function requireReadyDataset(name: string) {
    const id = idIn(name, 'datasets');
    const dataset = id ? state.datasets.get(id) : undefined;
    if (!dataset) throw controlError('NOT_FOUND', `Dataset "${name}" not found`);
    if (dataset.state !== 'READY') throw controlError('FAILED_PRECONDITION', `dataset "${name}" is not ready (state ${dataset.state})`);
    return id!;
  }

  // ---- batch inference jobs ----

  const batchJobs = createBatchInferenceJobs({
    account,
    resourceId: RESOURCE_ID,
    controlError,
    idIn,
    batchRows(name) {
      const rows = batchDatasets.get(requireReadyDataset(name));
      if (!rows) throw controlError('INVALID_ARGUMENT', `dataset "${name}" is not batch inference input: its lines must be {"custom_id", "body"}`);
      return rows;
    },
    createOutputDataset: (id, displayName) => createDataset({ datasetId: id, dataset: { displayName } }),
    writeOutput(id, files, done, rows) {
      state.datasetFiles.set(id, new Map(Object.entries(files).map(([name, content]) => [name, { content, via: 'upload' as const }])));
      Object.assign(findDataset(id), { exampleCount: String(rows), updateTime: isoNow() }, done ? { state: 'READY' } : {});
    },
    servable,
    rowsPerStep: () => opts.batchRowsPerStep ?? Infinity,
  });

  /** `outputModel` may be an id or a full model name in this account. */
  function outputModelName(value: string): string {
    const id = value.startsWith('accounts/') ? idIn(value, 'models') : value;
    if (!id || !RESOURCE_ID.test(id)) throw controlError('INVALID_ARGUMENT', `invalid output model "${value}"`);
    return `accounts/${account}/models/${id}`;
  }

  function findJob(id: string): FireworksSftJob {
    const job = state.jobs.get(id);
    if (!job) throw controlError('NOT_FOUND', `SupervisedFineTuningJob "${jobName(id)}" not found`);
    return job;
  }

  /** One lifecycle step, taken when the job is read. */
  function advance(id: string, job: FireworksSftJob) {
    const terminal = job.state === 'JOB_STATE_COMPLETED' || job.state === 'JOB_STATE_FAILED';
    const failure = failures.get(id);
    if (failure !== undefined && !terminal && job.state !== 'JOB_STATE_DELETING') {
      failures.delete(id);
      return finish(job, 'JOB_STATE_FAILED', { code: 'INVALID_ARGUMENT', message: failure });
    }
    const touch = (next: JobState) => Object.assign(job, { state: next, updateTime: isoNow() });
    if (job.state === 'JOB_STATE_CREATING') touch('JOB_STATE_VALIDATING');
    else if (job.state === 'JOB_STATE_VALIDATING') progress(id, touch('JOB_STATE_RUNNING'));
    else if (job.state === 'JOB_STATE_RUNNING' && runningSteps.get(id)! < runningPolls) progress(id, job);
    else if (job.state === 'JOB_STATE_RUNNING') touch('JOB_STATE_WRITING_RESULTS');
    else if (job.state === 'JOB_STATE_WRITING_RESULTS') complete(job);
  }

  /** One more GET spent RUNNING: the percentage and the tokens seen so far rise. */
  function progress(id: string, job: FireworksSftJob) {
    const step = (runningSteps.get(id) ?? 0) + 1;
    runningSteps.set(id, step);
    const percent = Math.round((100 * step) / runningPolls);
    const dataset = state.datasets.get(idIn(job.dataset, 'datasets')!);
    const tokensPerEpoch = Number(dataset?.estimatedTokenCount ?? 0);
    const epochsDone = (job.epochs * percent) / 100;
    job.jobProgress = { percent, epoch: Math.min(Math.floor(epochsDone), job.epochs - 1), inputTokens: Math.round(tokensPerEpoch * epochsDone) };
    job.updateTime = isoNow();
  }

  function finish(job: FireworksSftJob, next: JobState, status: FireworksStatus) {
    const now = isoNow();
    Object.assign(job, { state: next, status, completedTime: now, updateTime: now });
  }

  function complete(job: FireworksSftJob) {
    finish(job, 'JOB_STATE_COMPLETED', OK);
    const base = job.baseModel || state.models.get(job.warmStartFrom)?.peftDetails.baseModel || '';
    state.models.set(job.outputModel, {
      name: job.outputModel,
      displayName: job.displayName,
      kind: 'HF_PEFT_ADDON',
      state: 'READY',
      status: OK,
      createTime: job.completedTime!,
      updateTime: job.completedTime!,
      fineTuningJob: job.name,
      peftDetails: { baseModel: base, r: job.loraRank, targetModules: [] },
    });
  }

  /** The GET of a job: advance, answer; a job being deleted is shown once more, then gone. */
  function pollJob(id: string): FireworksSftJob {
    const job = findJob(id);
    if (job.state === 'JOB_STATE_DELETING') state.jobs.delete(id);
    else advance(id, job);
    return job;
  }

  // ---- deployments (the LoRA must be loaded onto a deployment before it answers) ----

  function deployModel(body: Record<string, unknown>): FireworksDeployedModel {
    const model = body.model;
    if (typeof model !== 'string' || !model) throw controlError('INVALID_ARGUMENT', 'model is required');
    if (!state.models.has(model)) throw controlError('NOT_FOUND', `Model "${model}" not found`);
    if (body.serverless) throw controlError('INVALID_ARGUMENT', 'LoRA models require a dedicated deployment; serverless must be false');
    const deployment = body.deployment;
    if (typeof deployment !== 'string' || !idIn(deployment, 'deployments')) {
      throw controlError('INVALID_ARGUMENT', 'deployment must name a deployment of this account (accounts/{account}/deployments/{id})');
    }
    return registerDeployment(model, deployment, body);
  }

  function registerDeployment(model: string, deployment: string, body: Record<string, unknown> = {}): FireworksDeployedModel {
    const now = isoNow();
    const first = ![...state.deployedModels.values()].some((d) => d.model === model);
    const deployed: FireworksDeployedModel = {
      name: `accounts/${account}/deployedModels/${randomBytes(4).toString('hex')}`,
      model,
      deployment,
      displayName: (body.displayName as string) ?? '',
      description: (body.description as string) ?? '',
      default: (body.default as boolean) ?? first,
      public: (body.public as boolean) ?? false,
      serverless: false,
      state: 'DEPLOYED',
      status: OK,
      createTime: now,
      updateTime: now,
    };
    state.deployedModels.set(deployed.name, deployed);
    return deployed;
  }

  function findDeployedModel(id: string): FireworksDeployedModel {
    const deployed = state.deployedModels.get(`accounts/${account}/deployedModels/${id}`);
    if (!deployed) throw controlError('NOT_FOUND', `DeployedModel "accounts/${account}/deployedModels/${id}" not found`);
    return deployed;
  }

  // ---- routing ----

  async function controlPlane(req: http.IncomingMessage, rest: string, query: URLSearchParams): Promise<unknown> {
    const m = /^(\w+)(?:\/([^/:]+))?(?::(\w+))?$/.exec(rest);
    const [collection, id, verb] = m ? [m[1], m[2], m[3]] : [];
    const action = `${req.method} ${collection}${id ? '/{id}' : ''}${verb ? `:${verb}` : ''}`;
    switch (action) {
      case 'POST datasets':
        return createDataset(await readProto(req, CREATE_DATASET_SCHEMA));
      case 'GET datasets':
        return page(state.datasets.values(), query, 'datasets');
      case 'GET datasets/{id}':
        return findDataset(id!);
      case 'DELETE datasets/{id}':
        findDataset(id!);
        state.datasets.delete(id!);
        state.datasetFiles.delete(id!);
        return {};
      case 'POST datasets/{id}:upload':
        return uploadDataset(req, id!);
      case 'POST datasets/{id}:getUploadEndpoint':
        return uploadEndpoints(id!, await readProto(req, UPLOAD_ENDPOINT_SCHEMA));
      case 'GET datasets/{id}:getDownloadEndpoint':
        return downloadEndpoints(id!);
      case 'POST datasets/{id}:validateUpload':
        await readProto(req, {});
        validateDataset(id!, findDataset(id!));
        return {};
      case 'POST supervisedFineTuningJobs':
        return createJob(await readProto(req, SFT_JOB_SCHEMA), query);
      case 'GET supervisedFineTuningJobs':
        return page(state.jobs.values(), query, 'supervisedFineTuningJobs');
      case 'GET supervisedFineTuningJobs/{id}':
        return pollJob(id!);
      case 'DELETE supervisedFineTuningJobs/{id}':
        Object.assign(findJob(id!), { state: 'JOB_STATE_DELETING', updateTime: isoNow() });
        return {};
      case 'GET models':
        return page(state.models.values(), query, 'models');
      case 'POST batchInferenceJobs':
        return batchJobs.create(await readProto(req, BATCH_JOB_SCHEMA), query);
      case 'GET batchInferenceJobs':
        return page(batchJobs.jobs.values(), query, 'batchInferenceJobs');
      case 'GET batchInferenceJobs/{id}':
        return batchJobs.poll(id!);
      case 'DELETE batchInferenceJobs/{id}':
        return batchJobs.remove(id!);
      case 'GET models/{id}': {
        const model = state.models.get(`accounts/${account}/models/${id}`);
        if (!model) throw controlError('NOT_FOUND', `Model "accounts/${account}/models/${id}" not found`);
        return model;
      }
      case 'POST deployedModels':
        return deployModel(await readProto(req, DEPLOYED_MODEL_SCHEMA));
      case 'GET deployedModels/{id}':
        return findDeployedModel(id!);
      case 'DELETE deployedModels/{id}':
        state.deployedModels.delete(findDeployedModel(id!).name);
        return {};
    }
    // What the gateway answers for a path no RPC is bound to (e.g. a `:cancel` verb, which the REST API lacks).
    throw controlError('NOT_FOUND', 'Not Found');
  }

  /** Whether `model` answers chat: a known base model, or a model loaded onto a deployment. */
  function servable(model: string): boolean {
    const name = model.split('#')[0];
    return baseModels.has(name) || [...state.deployedModels.values()].some((d) => d.model === name);
  }

  const server = await startFakeServer({
    renderError,
    injectedError: (status, o, url) => injectedError(status, o.message, url.pathname),
    async route(req, res, url) {
      const path = url.pathname;
      if (path.startsWith(`/${BUCKET}/`)) return bucketRequest(req, url);
      const inference = path.startsWith('/inference/');
      if (bearerToken(req) !== apiKey) {
        throw inference
          ? inferenceError(401, 'The API key you provided is invalid.', 'UNAUTHORIZED')
          : controlError('UNAUTHENTICATED', 'unauthenticated: invalid API key');
      }
      if (inference) {
        if (req.method === 'POST' && path === '/inference/v1/chat/completions') {
          return answerChat(req, res, {
            servable,
            invalid: (message, param) => inferenceError(400, message, 'INVALID_ARGUMENT', param, 'invalid_request_error'),
            notFound: () => inferenceError(404, 'Model not found, inaccessible, and/or not deployed', 'NOT_FOUND', 'model'),
            record: (body) => state.chatRequests.push(body),
            delayMs: opts.streamDelayMs,
            onAbandoned: () => state.abandonedStreams++,
          });
        }
        throw inferenceError(404, 'Not Found', 'NOT_FOUND');
      }
      const m = /^\/v1\/accounts\/([^/]+)\/(.+)$/.exec(path);
      if (!m) throw controlError('NOT_FOUND', 'Not Found');
      const requested = decodePath(m[1]);
      if (requested !== account) throw controlError('PERMISSION_DENIED', `permission denied: the API key has no access to account "${requested}"`);
      return { status: 200, body: await controlPlane(req, decodePath(m[2]), url.searchParams) };
    },
  });
  bucketOrigin = server.origin;
  state.requests = server.requests;

  return {
    /** `http://127.0.0.1:<port>`: the control plane is under `/v1/accounts/{accountId}`. */
    origin: server.origin,
    /** Base URL for OpenAI-compatible clients (`…/inference/v1`). */
    inferenceUrl: `${server.origin}/inference/v1`,
    accountId: account,
    apiKey,
    state,
    /**
     * Signed URLs handed out from now on point at `origin` (their path and signature unchanged), as an
     * answer naming another host would: what the gateway may fetch from is its business.
     */
    signUrlsOn(origin: string) {
      bucketOrigin = origin;
    },
    /** The job fails (JOB_STATE_FAILED, `status.code` INVALID_ARGUMENT) at its next GET. */
    failJob(id: string, message = 'Training failed: the dataset could not be tokenized') {
      findJob(id);
      failures.set(id, message);
    },
    /** Batch inference jobs by id; `fail(id)` ends one FAILED at its next GET, `expire(id)` ends it EXPIRED now (rows written so far kept). */
    batch: { jobs: batchJobs.jobs, fail: batchJobs.fail, expire: batchJobs.expire, refuseRows: batchJobs.refuseRows },
    /** Loads `model` onto a deployment without the HTTP call, so it answers chat. */
    deploy: (model: string, deployment = `accounts/${account}/deployments/fake-deployment`) => registerDeployment(model, deployment),
    /** The next `times` (default 1) requests matching method and path prefix fail (in that path's error dialect). */
    failNext: server.failNext,
    /** The next `times` (default 1) matching requests are answered only after `ms`. */
    delayNext: server.delayNext,
    close: server.close,
  };
}

export type FakeFireworks = Awaited<ReturnType<typeof startFakeFireworks>>;
