/**
 * A fake Google Cloud for the Vertex AI adapter: three loopback servers standing for Google's three hosts,
 * sharing one in-memory state and one request log.
 *
 * - token endpoint (`oauth2.googleapis.com`): `POST /token`, the service-account JWT-bearer exchange, with
 *   the assertion's RS256 signature verified against the fake's registered service account;
 * - Cloud Storage (`storage.googleapis.com`): the JSON API's uploads, metadata, download, list and delete;
 * - Vertex AI (`{location}-aiplatform.googleapis.com`): GenAI tuning jobs, `generateContent` /
 *   `streamGenerateContent` on base models and on tuned models' endpoints, and batch prediction jobs
 *   (vertex-batch.ts) on publisher and tuned models.
 *
 * Storage and Vertex accept only `Authorization: Bearer <unexpired token issued by the token endpoint>`.
 * A tuning job advances one state per GET of it (PENDING → RUNNING → SUCCEEDED), as the gateway's monitor
 * polls; `failJob` makes its next step FAILED. `failNext` / `delayNext` inject failures and slowness on
 * whichever host owns the path.
 */
import type http from 'node:http';
import { writeEvents } from './chat';
import { fakeReply, type FakeConversation } from './fake-model';
import {
  contentsProblem,
  datasetStats,
  geminiConversation,
  geminiShapeOf,
  distribution,
  generateContentResponse,
  streamedResponses,
  systemInstructionProblem,
  tuningExampleProblem,
  type DatasetStats,
  type GeminiContent,
  type GeminiPart,
} from './gemini';
import {
  badRequest,
  double,
  enumValue,
  failedPrecondition,
  int64,
  invalidValue,
  isObject,
  listPage,
  protoFields,
  renderVertexError,
  snakeCase,
  stringValue,
  unauthenticated,
  vertexInjectedError,
  VertexError,
} from './vertex-proto';
import { createBatchPredictionJobs } from './vertex-batch';
import { createGcsRoutes, createGcsState, gcsInjectedError, gcsUnauthenticated, putObject, renderGcsError, type GcsState } from './gcs';
import {
  CLOUD_PLATFORM_SCOPE,
  createServiceAccount,
  OAuthError,
  renderOAuthError,
  TokenAuthority,
  type BearerProblem,
  type IssuedToken,
  type ServiceAccountKey,
} from './google-auth';
import {
  type FakeHttpError,
  randomDigits,
  readBody,
  readJsonObject,
  startFakeServer,
  writeChunks,
  type FailOptions,
  type FakeReply,
  type FakeServer,
  type RecordedRequest,
} from './kit';

export type JobState = 'JOB_STATE_PENDING' | 'JOB_STATE_RUNNING' | 'JOB_STATE_SUCCEEDED' | 'JOB_STATE_FAILED' | 'JOB_STATE_CANCELLING' | 'JOB_STATE_CANCELLED';

export interface TunedCheckpoint {
  checkpointId: string;
  epoch: string;
  step: string;
  endpoint: string;
}

/** A TuningJob resource as Vertex returns it (int64 values as strings, RFC 3339 times). */
export interface TuningJob {
  name: string;
  baseModel: string;
  tunedModelDisplayName?: string;
  description?: string;
  labels?: Record<string, string>;
  supervisedTuningSpec: Record<string, unknown>;
  state: JobState;
  createTime: string;
  updateTime: string;
  startTime?: string;
  endTime?: string;
  error?: { code: number; message: string };
  experiment?: string;
  tuningDataStats?: Record<string, unknown>;
  tunedModel?: { model: string; endpoint: string; checkpoints: TunedCheckpoint[] };
  [echoed: string]: unknown;
}

/** One generateContent / streamGenerateContent call as received (recorded before it is validated). */
export interface GenerateRequestRecord {
  /** `publishers/google/models/{m}` or `endpoints/{id}`, as in the path. */
  target: string;
  method: 'generateContent' | 'streamGenerateContent';
  /** The `alt` query parameter (`sse` for server-sent events). */
  alt: string | null;
  body: Record<string, unknown>;
  accessToken: string;
}

export interface FakeVertexOptions {
  /** The project id (default `fake-project`); paths may name the project by id or by number. */
  projectId?: string;
  /** The project number resource names use (default: 12 random digits). */
  projectNumber?: string;
  /** The one region this Vertex host serves (default `us-central1`). */
  location?: string;
  /** Buckets that exist (default `['fake-bucket']`). */
  buckets?: string[];
  /** Publisher models that answer generateContent and may be tuned. */
  models?: string[];
  /** `expires_in` of issued tokens (default 3599). */
  tokenLifetimeSeconds?: number;
  /** Lifecycle steps a tuning job advances per GET of it (default 1). */
  stepsPerPoll?: number;
  /** Pause between streamed chunks (default 0). */
  streamDelayMs?: number;
  /** Rows a RUNNING batch prediction job runs per step (default: all of them). */
  batchRowsPerStep?: number;
}

const DEFAULT_MODELS = ['gemini-2.0-flash-001', 'gemini-2.0-flash-lite-001', 'gemini-2.5-flash', 'gemini-2.5-flash-lite', 'gemini-2.5-pro'];
/** Vertex picks the epoch count from the dataset size when none is given; the fake uses a fixed one. */
const DEFAULT_EPOCHS = 3;
const TERMINAL: JobState[] = ['JOB_STATE_SUCCEEDED', 'JOB_STATE_FAILED', 'JOB_STATE_CANCELLED'];
/** google.rpc.Code values used in a job's `error`. */
const RPC_CANCELLED = 1;
const RPC_INTERNAL = 13;

/** AdapterSize in proto order (its numbers are not in size order: TWO was added last). */
const ADAPTER_SIZES = [
  'ADAPTER_SIZE_UNSPECIFIED',
  'ADAPTER_SIZE_ONE',
  'ADAPTER_SIZE_FOUR',
  'ADAPTER_SIZE_EIGHT',
  'ADAPTER_SIZE_SIXTEEN',
  'ADAPTER_SIZE_THIRTY_TWO',
  'ADAPTER_SIZE_TWO',
];
const TUNING_MODES = ['TUNING_MODE_UNSPECIFIED', 'TUNING_MODE_FULL', 'TUNING_MODE_PEFT_ADAPTER'];

/** Real tuning methods the fake does not run: it answers them with a 400 rather than pretend. */
const UNSUPPORTED_TUNING = [
  'preTunedModel',
  'preferenceOptimizationSpec',
  'distillationSpec',
  'fullFineTuningSpec',
  'partnerModelTuningSpec',
  'customBaseModel',
];
const ECHOED_FIELDS = ['tunedModelDisplayName', 'description', 'labels', 'encryptionSpec', 'serviceAccount', 'outputUri'];
const OUTPUT_ONLY_FIELDS = [
  'name',
  'state',
  'createTime',
  'startTime',
  'endTime',
  'updateTime',
  'error',
  'experiment',
  'tunedModel',
  'tuningDataStats',
  'pipelineJob',
];
/** TuningJob fields a create request may carry; output-only ones are accepted and ignored, as Google does. */
const TUNING_JOB_FIELDS = ['baseModel', 'supervisedTuningSpec', 'evaluateDatasetRuns', ...UNSUPPORTED_TUNING, ...ECHOED_FIELDS, ...OUTPUT_ONLY_FIELDS];
const SPEC_FIELDS = ['trainingDatasetUri', 'validationDatasetUri', 'hyperParameters', 'exportLastCheckpointOnly', 'tuningMode', 'evaluationConfig'];
const HYPER_FIELDS = ['epochCount', 'learningRateMultiplier', 'learningRate', 'adapterSize', 'batchSize'];
const FILTER_FIELDS: Record<string, (job: TuningJob) => string | undefined> = {
  state: (job) => job.state,
  baseModel: (job) => job.baseModel,
  tunedModelDisplayName: (job) => job.tunedModelDisplayName,
  displayName: (job) => job.tunedModelDisplayName,
};
const GENERATE_FIELDS = [
  'contents',
  'systemInstruction',
  'tools',
  'toolConfig',
  'safetySettings',
  'generationConfig',
  'labels',
  'cachedContent',
  'modelArmorConfig',
];

interface Example {
  contents: GeminiContent[];
  systemInstruction?: { parts?: GeminiPart[] };
}

/** What the fake decided about a job at creation, for the steps it will take later. */
interface JobPlan {
  stats: DatasetStats;
  firstExample: Example;
  epochs: number;
  lastCheckpointOnly: boolean;
  forcedError?: { code: number; message: string };
}

/** The examples of a `gs://` JSONL dataset in the fake bucket, each checked as a Gemini tuning example. */
function readDataset(storage: GcsState, uri: unknown, where: string): Example[] {
  const text = stringValue(uri, where);
  const match = /^gs:\/\/([^/]+)\/(.+)$/.exec(text);
  if (!match) throw badRequest(where, `Invalid dataset URI ${text}: it must be a gs:// URI of a JSONL file.`);
  const object = storage.buckets.get(match[1])?.get(match[2]);
  if (!object) throw badRequest(where, `Dataset ${text} does not exist or cannot be read.`);
  const examples: Example[] = [];
  const lines = object.data.toString('utf8').split('\n');
  for (const [index, line] of lines.entries()) {
    if (!line.trim()) continue;
    let example: unknown;
    try {
      example = JSON.parse(line);
    } catch {
      throw badRequest(where, `Error in dataset ${text} at line ${index + 1}: the line is not valid JSON.`);
    }
    const problem = tuningExampleProblem(example);
    if (problem) throw badRequest(where, `Error in dataset ${text} at line ${index + 1}: ${problem}`);
    const { contents, systemInstruction, system_instruction } = example as Record<string, unknown>;
    const instruction = (systemInstruction ?? system_instruction) as Example['systemInstruction'];
    examples.push({ contents: contents as GeminiContent[], systemInstruction: instruction });
  }
  if (examples.length === 0) throw badRequest(where, `Dataset ${text} is empty.`);
  return examples;
}

/** Hyperparameters as Vertex reads and echoes them: int64 as strings, enums by name, not both learning rates. */
function hyperParameters(value: unknown): Record<string, unknown> {
  const where = 'tuning_job.supervised_tuning_spec.hyper_parameters';
  const input = protoFields(value, HYPER_FIELDS, where);
  const out: Record<string, unknown> = {};
  if (input.epochCount !== undefined) {
    out.epochCount = int64(input.epochCount, `${where}.epoch_count`);
    if (Number(out.epochCount) < 1) throw badRequest(`${where}.epoch_count`, 'epoch_count must be a positive number.');
  }
  if (input.learningRateMultiplier !== undefined) {
    out.learningRateMultiplier = double(input.learningRateMultiplier, `${where}.learning_rate_multiplier`);
  }
  if (input.learningRate !== undefined) out.learningRate = double(input.learningRate, `${where}.learning_rate`);
  if (out.learningRate !== undefined && out.learningRateMultiplier !== undefined) {
    throw badRequest(where, 'Only one of learning_rate and learning_rate_multiplier may be set.');
  }
  if (input.adapterSize !== undefined) {
    out.adapterSize = enumValue(input.adapterSize, ADAPTER_SIZES, 'SupervisedHyperParameters.AdapterSize', `${where}.adapter_size`);
  }
  if (input.batchSize !== undefined) out.batchSize = int64(input.batchSize, `${where}.batch_size`);
  return out;
}

/** The supervised tuning spec as Vertex echoes it, and the training examples it names. */
function supervisedSpec(storage: GcsState, value: unknown): { spec: Record<string, unknown>; examples: Example[] } {
  const where = 'tuning_job.supervised_tuning_spec';
  if (value === undefined) throw badRequest(where, 'supervised_tuning_spec is required.');
  const input = protoFields(value, SPEC_FIELDS, where);
  if (input.trainingDatasetUri === undefined) throw badRequest(`${where}.training_dataset_uri`, 'training_dataset_uri is required.');
  const examples = readDataset(storage, input.trainingDatasetUri, `${where}.training_dataset_uri`);
  const spec: Record<string, unknown> = { trainingDatasetUri: input.trainingDatasetUri };
  if (input.validationDatasetUri !== undefined) {
    readDataset(storage, input.validationDatasetUri, `${where}.validation_dataset_uri`);
    spec.validationDatasetUri = input.validationDatasetUri;
  }
  if (input.hyperParameters !== undefined) spec.hyperParameters = hyperParameters(input.hyperParameters);
  if (input.exportLastCheckpointOnly !== undefined) {
    if (typeof input.exportLastCheckpointOnly !== 'boolean') {
      throw invalidValue(`${where}.export_last_checkpoint_only`, 'TYPE_BOOL', input.exportLastCheckpointOnly);
    }
    spec.exportLastCheckpointOnly = input.exportLastCheckpointOnly;
  }
  if (input.tuningMode !== undefined) spec.tuningMode = enumValue(input.tuningMode, TUNING_MODES, 'TuningMode', `${where}.tuning_mode`);
  return { spec, examples };
}

/** A create request's own fields, checked as Vertex checks them: a tunable base model, a display name and labels that fit. */
function jobFields(body: Record<string, unknown>, models: string[]) {
  const input = protoFields(body, TUNING_JOB_FIELDS, 'tuning_job');
  const unsupported = UNSUPPORTED_TUNING.find((field) => input[field] !== undefined);
  if (unsupported) {
    const field = snakeCase(unsupported);
    throw badRequest(`tuning_job.${field}`, `${field} is not supported by the fake Vertex AI (supervised tuning of a base model only).`);
  }
  if (input.baseModel === undefined) throw badRequest('tuning_job.base_model', 'base_model is required.');
  const baseModel = stringValue(input.baseModel, 'tuning_job.base_model');
  if (!models.includes(baseModel)) throw badRequest('tuning_job.base_model', `Base model ${baseModel} is not supported for tuning.`);
  const displayName = input.tunedModelDisplayName;
  if (displayName !== undefined && stringValue(displayName, 'tuning_job.tuned_model_display_name').length > 128) {
    throw badRequest('tuning_job.tuned_model_display_name', 'tuned_model_display_name must be at most 128 characters.');
  }
  const { labels } = input;
  if (labels !== undefined && !(isObject(labels) && Object.values(labels).every((value) => typeof value === 'string'))) {
    throw invalidValue('tuning_job.labels', 'TYPE_MAP', labels);
  }
  const echoed = Object.fromEntries(ECHOED_FIELDS.filter((field) => input[field] !== undefined).map((field) => [field, input[field]]));
  return { baseModel, echoed, specInput: input.supervisedTuningSpec };
}

/** `tuningDataStats` as Vertex reports it once tuning runs (int64 counts as strings). */
function dataStats(plan: JobPlan) {
  const { stats, epochs } = plan;
  const tokensPerEpoch = [...stats.inputTokens, ...stats.outputTokens].reduce((a, b) => a + b, 0);
  return {
    supervisedTuningDataStats: {
      tuningDatasetExampleCount: String(stats.examples),
      totalTuningCharacterCount: String(stats.characters),
      totalBillableTokenCount: String(tokensPerEpoch * epochs),
      tuningStepCount: String(stats.examples * epochs),
      userInputTokenDistribution: distribution(stats.inputTokens),
      userOutputTokenDistribution: distribution(stats.outputTokens),
      userMessagePerExampleDistribution: distribution(stats.turns),
      userDatasetExamples: plan.firstExample.contents,
    },
  };
}

/** The model's answer to a GenerateContentRequest, checked as Vertex checks one (INVALID_ARGUMENT otherwise). */
function generateAnswer(label: string, body: Record<string, unknown>) {
  const request = protoFields(body, GENERATE_FIELDS, '');
  const problem = contentsProblem(request.contents, false) ?? systemInstructionProblem(request.systemInstruction);
  if (problem) throw badRequest('contents', problem);
  let conversation: FakeConversation;
  try {
    conversation = geminiConversation(request);
  } catch (err) {
    throw badRequest('contents', (err as Error).message);
  }
  return { answer: fakeReply(label, conversation), shape: geminiShapeOf(request) };
}

/** Vertex's timestamps carry microseconds. */
const timestamp = () => new Date().toISOString().replace('Z', '000Z');

export async function startFakeVertex(options: FakeVertexOptions = {}) {
  const projectId = options.projectId ?? 'fake-project';
  const projectNumber = options.projectNumber ?? randomDigits(12);
  const location = options.location ?? 'us-central1';
  const models = options.models ?? DEFAULT_MODELS;
  const parent = `projects/${projectNumber}/locations/${location}`;
  const requests: RecordedRequest[] = [];

  const oauthServer = await startFakeServer({
    requests,
    renderError: renderOAuthError,
    async route(req, _res, url) {
      if (req.method !== 'POST' || url.pathname !== '/token') {
        throw new OAuthError(404, 'invalid_request', `Unknown endpoint ${req.method} ${url.pathname}`);
      }
      const form = new URLSearchParams((await readBody(req)).toString('utf8'));
      if (!req.headers['content-type']?.startsWith('application/x-www-form-urlencoded')) {
        throw new OAuthError(400, 'invalid_request', 'The request body must be application/x-www-form-urlencoded.');
      }
      return { status: 200, body: authority.exchange(form), headers: { 'cache-control': 'no-cache, no-store, max-age=0, must-revalidate' } };
    },
  });
  const tokenUrl = `${oauthServer.origin}/token`;
  const authority = new TokenAuthority(tokenUrl, options.tokenLifetimeSeconds ?? 3599);
  const serviceAccount = createServiceAccount(projectId, tokenUrl);
  authority.register(serviceAccount);

  const state = {
    /** The token endpoint: registered `accounts`, issued `tokens`, successful `exchanges`, every request in `requests` (with why it was refused). */
    oauth: authority,
    /** Cloud Storage: buckets → objects (exact bytes in `data`), resumable upload sessions. */
    storage: createGcsState(options.buckets ?? ['fake-bucket']),
    /** Tuning jobs by numeric id, in creation order. */
    tuningJobs: new Map<string, TuningJob>(),
    /** Endpoints that serve a tuned model (endpoint id → job name), filled when a job succeeds. */
    endpoints: new Map<string, string>(),
    /** Bodies of `POST …/tuningJobs` exactly as received, valid or not. */
    createJobRequests: [] as Record<string, unknown>[],
    generateRequests: [] as GenerateRequestRecord[],
    /** Streams the client left before their end. */
    abortedStreams: 0,
    /** Every request to any of the three hosts, in order. */
    requests,
  };
  const plans = new Map<string, JobPlan>();
  const settings = {
    stepsPerPoll: options.stepsPerPoll ?? 1,
    streamDelayMs: options.streamDelayMs ?? 0,
    batchRowsPerStep: options.batchRowsPerStep ?? Infinity,
    /**
     * The next SSE stream sends its first event, then Vertex's error event with this message (given the
     * bearer token the request carried, so a test can have the provider echo it), and ends.
     */
    nextStreamFailure: undefined as ((token: string) => string) | undefined,
    get tokenLifetimeSeconds() {
      return authority.lifetimeSeconds;
    },
    set tokenLifetimeSeconds(seconds: number) {
      authority.lifetimeSeconds = seconds;
    },
  };

  function bearer(req: http.IncomingMessage, refuse: (problem: BearerProblem) => FakeHttpError): IssuedToken {
    const token = authority.check(req.headers.authorization);
    if (typeof token === 'string') throw refuse(token);
    return token;
  }

  const gcsRoute = createGcsRoutes(state.storage);
  const storageServer = await startFakeServer({
    requests,
    renderError: renderGcsError,
    injectedError: gcsInjectedError,
    async route(req, _res, url) {
      // A resumable session URI is its own credential: GCS takes the chunks PUT to it without a token.
      const toUploadSession = req.method === 'PUT' && url.searchParams.has('upload_id');
      if (!toUploadSession) bearer(req, (problem) => gcsUnauthenticated(problem, req.method ?? 'GET', url.pathname));
      return gcsRoute(req, url);
    },
  });

  // ---- tuning jobs ----

  function createJob(body: Record<string, unknown>): TuningJob {
    state.createJobRequests.push(body);
    const { baseModel, echoed, specInput } = jobFields(body, models);
    const { spec, examples } = supervisedSpec(state.storage, specInput);
    const id = randomDigits(19);
    const now = timestamp();
    const job: TuningJob = {
      name: `${parent}/tuningJobs/${id}`,
      ...echoed,
      baseModel,
      supervisedTuningSpec: spec,
      state: 'JOB_STATE_PENDING',
      createTime: now,
      updateTime: now,
    };
    const hyper = spec.hyperParameters as { epochCount?: string } | undefined;
    plans.set(id, {
      stats: datasetStats(examples),
      firstExample: examples[0],
      epochs: Number(hyper?.epochCount ?? DEFAULT_EPOCHS),
      lastCheckpointOnly: spec.exportLastCheckpointOnly === true,
    });
    state.tuningJobs.set(id, job);
    return job;
  }

  const idOf = (nameOrId: string) => nameOrId.split('/').at(-1)!;

  function findJob(nameOrId: string): TuningJob {
    const job = state.tuningJobs.get(idOf(nameOrId));
    if (!job) throw new VertexError(404, `The TuningJob ${parent}/tuningJobs/${idOf(nameOrId)} does not exist.`);
    return job;
  }

  /** The tuned model, one checkpoint per epoch (or only the last), each checkpoint served on its own endpoint. */
  function tunedModel(job: TuningJob, plan: JobPlan): NonNullable<TuningJob['tunedModel']> {
    const epochs = Array.from({ length: plan.epochs }, (_, i) => i + 1).filter((epoch) => epoch === plan.epochs || !plan.lastCheckpointOnly);
    const checkpoints = epochs.map((epoch) => ({
      checkpointId: String(epoch),
      epoch: String(epoch),
      step: String(plan.stats.examples * epoch),
      endpoint: `${parent}/endpoints/${randomDigits(19)}`,
    }));
    for (const checkpoint of checkpoints) state.endpoints.set(idOf(checkpoint.endpoint), job.name);
    return { model: `${parent}/models/${randomDigits(19)}@1`, endpoint: checkpoints.at(-1)!.endpoint, checkpoints };
  }

  function finish(job: TuningJob, outcome: JobState, error?: TuningJob['error']) {
    job.state = outcome;
    job.endTime = timestamp();
    if (error) job.error = error;
  }

  /** One lifecycle step: PENDING → RUNNING → SUCCEEDED (FAILED when `failJob` asked), CANCELLING → CANCELLED. */
  function advance(nameOrId: string): TuningJob {
    const job = findJob(nameOrId);
    const plan = plans.get(idOf(job.name))!;
    if (TERMINAL.includes(job.state)) return job;
    if (job.state === 'JOB_STATE_CANCELLING') {
      finish(job, 'JOB_STATE_CANCELLED', { code: RPC_CANCELLED, message: 'CANCELLED' });
    } else if (plan.forcedError) {
      finish(job, 'JOB_STATE_FAILED', plan.forcedError);
    } else if (job.state === 'JOB_STATE_PENDING') {
      job.state = 'JOB_STATE_RUNNING';
      job.startTime = timestamp();
      job.tuningDataStats = dataStats(plan);
      job.experiment = `${parent}/metadataStores/default/contexts/tuning-experiment-${idOf(job.name)}`;
    } else {
      job.tunedModel = tunedModel(job, plan);
      finish(job, 'JOB_STATE_SUCCEEDED');
    }
    job.updateTime = job.endTime ?? timestamp();
    return job;
  }

  function cancel(job: TuningJob): Record<string, never> {
    if (TERMINAL.includes(job.state)) throw failedPrecondition(`Cannot cancel tuning job ${job.name} in state ${job.state}.`);
    if (job.state !== 'JOB_STATE_CANCELLING') {
      job.state = 'JOB_STATE_CANCELLING';
      job.updateTime = timestamp();
    }
    return {};
  }

  const listJobs = (query: URLSearchParams) => listPage([...state.tuningJobs.values()], query, 'tuningJobs', FILTER_FIELDS);

  // ---- inference ----

  /** What a generate path names: a publisher model or an endpoint serving a succeeded tuning job. */
  function resolveTarget(target: string): { label: string; modelVersion: string } {
    const publisher = /^publishers\/google\/models\/(.+)$/.exec(target);
    if (publisher) {
      if (!models.includes(publisher[1])) {
        throw new VertexError(404, `Publisher model \`${parent}/${target}\` was not found or your project does not have access to it.`);
      }
      return { label: publisher[1], modelVersion: publisher[1] };
    }
    const jobName = state.endpoints.get(idOf(target));
    if (!jobName) throw new VertexError(404, `Endpoint \`${parent}/${target}\` not found.`);
    return { label: `${parent}/${target}`, modelVersion: findJob(jobName).baseModel };
  }

  /** A batch job's `model`: a publisher model, or a tuned model by `projects/{p}/locations/{l}/models/{id}[@version]`. */
  function resolveBatchModel(model: string): { label: string; modelVersion: string } {
    if (model.startsWith('publishers/')) return resolveTarget(model);
    const tuned = /^projects\/([^/]+)\/locations\/([^/]+)\/models\/(\d+)(@\d+)?$/.exec(model);
    if (!tuned) throw badRequest('batch_prediction_job.model', `Invalid model resource name ${model}.`);
    checkProjectAndLocation(tuned[1], tuned[2]);
    const resource = `${parent}/models/${tuned[3]}`;
    const job = [...state.tuningJobs.values()].find((j) => j.tunedModel?.model.split('@')[0] === resource);
    if (!job) throw new VertexError(404, `Model \`${resource}\` not found.`);
    return { label: resource, modelVersion: job.baseModel };
  }

  const batchJobs = createBatchPredictionJobs({
    storage: state.storage,
    parent,
    resolveModel: resolveBatchModel,
    answer(label, modelVersion, request) {
      const { answer, shape } = generateAnswer(label, request);
      return generateContentResponse(modelVersion, answer, shape);
    },
    settings,
    timestamp,
  });

  async function generate(req: http.IncomingMessage, res: http.ServerResponse, call: Omit<GenerateRequestRecord, 'body'>) {
    const body = await readJsonObject(req, () => badRequest('', 'Invalid JSON payload received. Unexpected token.'));
    state.generateRequests.push({ ...call, body });
    const { label, modelVersion } = resolveTarget(call.target);
    const { answer, shape } = generateAnswer(label, body);
    if (call.method === 'generateContent') return { status: 200, body: generateContentResponse(modelVersion, answer, shape) };
    const chunks = streamedResponses(modelVersion, answer, shape).map((chunk) => JSON.stringify(chunk));
    const stream = { delayMs: settings.streamDelayMs, onAbandoned: () => state.abortedStreams++ };
    const failure = settings.nextStreamFailure;
    settings.nextStreamFailure = undefined;
    if (failure && call.alt === 'sse') {
      const token = (req.headers.authorization ?? '').replace(/^Bearer /, '');
      return writeEvents(res, [chunks[0], JSON.stringify({ error: { code: 500, message: failure(token), status: 'INTERNAL' } })], stream);
    }
    if (call.alt === 'sse') return writeEvents(res, chunks, stream);
    // Without alt=sse Vertex streams one JSON array, element by element.
    const pieces = chunks.map((chunk, i) => `${i === 0 ? '[' : '\n,\r\n'}${chunk}`);
    return writeChunks(res, { status: 200, headers: { 'content-type': 'application/json; charset=UTF-8' } }, [...pieces, '\n]'], stream);
  }

  // ---- routing ----

  function checkProjectAndLocation(project: string, region: string) {
    if (project !== projectId && project !== projectNumber) {
      const metadata = { consumer: `projects/${project}`, service: 'aiplatform.googleapis.com' };
      const details = [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'CONSUMER_INVALID', domain: 'googleapis.com', metadata }];
      throw new VertexError(403, `Permission denied on resource project ${project}.`, { details });
    }
    if (region !== location) throw badRequest('parent', `The provided location ID doesn't match the endpoint. The valid location ID is \`${location}\`.`);
  }

  async function vertexRoute(req: http.IncomingMessage, res: http.ServerResponse, url: URL): Promise<FakeReply | void> {
    const token = bearer(req, (problem) => unauthenticated(problem, 'aiplatform.googleapis.com'));
    const method = req.method ?? 'GET';
    // v1beta1 (@google/genai's default) serves the same resources as v1.
    const m = /^\/v1(?:beta1)?\/projects\/([^/]+)\/locations\/([^/]+)\/(.+)$/.exec(url.pathname);
    if (!m) throw new VertexError(404, `The requested URL ${url.pathname} was not found on this server.`);
    checkProjectAndLocation(m[1], m[2]);
    const rest = m[3];
    if (rest === 'tuningJobs' && method === 'POST') {
      return { status: 200, body: createJob(await readJsonObject(req, () => badRequest('', 'Invalid JSON payload received.'))) };
    }
    if (rest === 'tuningJobs' && method === 'GET') return { status: 200, body: listJobs(url.searchParams) };
    const job = /^tuningJobs\/(\d+)(:cancel)?$/.exec(rest);
    if (job && method === 'GET' && !job[2]) {
      for (let i = 0; i < settings.stepsPerPoll; i++) advance(job[1]);
      return { status: 200, body: findJob(job[1]) };
    }
    if (job && method === 'POST' && job[2]) return { status: 200, body: cancel(findJob(job[1])) };
    const batch = batchJobs.route(method, rest, url, () => readJsonObject(req, () => badRequest('', 'Invalid JSON payload received.')));
    if (batch) return batch;
    const call = /^(endpoints\/[^/:]+|publishers\/google\/models\/[^/:]+):(generateContent|streamGenerateContent)$/.exec(rest);
    if (call && method === 'POST') {
      const generateMethod = call[2] as GenerateRequestRecord['method'];
      return generate(req, res, { target: call[1], method: generateMethod, alt: url.searchParams.get('alt'), accessToken: token.accessToken });
    }
    throw new VertexError(404, `The requested URL ${url.pathname} was not found on this server.`);
  }

  const vertexServer = await startFakeServer({ requests, renderError: renderVertexError, injectedError: vertexInjectedError, route: vertexRoute });

  /** The server that owns a path: `/token` the token endpoint, `/storage/…` `/upload/…` `/download/…` Cloud Storage, else Vertex. */
  function serverFor(pathPrefix: string): FakeServer {
    if (pathPrefix.startsWith('/token')) return oauthServer;
    if (/^\/(upload\/|download\/)?storage\//.test(pathPrefix)) return storageServer;
    return vertexServer;
  }

  return {
    /** The token endpoint (also the service account's `token_uri`). */
    tokenUrl,
    /** Cloud Storage's endpoint (`@google-cloud/storage`'s `apiEndpoint`): the JSON API under `/storage/v1`, uploads under `/upload/storage/v1`. */
    storageUrl: storageServer.origin,
    /** Vertex AI's origin (`@google/genai`'s `httpOptions.baseUrl`). */
    vertexOrigin: vertexServer.origin,
    /** Vertex AI's versioned base URL, `…/v1`. */
    vertexUrl: `${vertexServer.origin}/v1`,
    projectId,
    projectNumber,
    location,
    /** The registered service account's key file (its `token_uri` points at the fake). */
    serviceAccount,
    state,
    settings,
    /** A key file of a service account the token endpoint does not know (for negative tests). */
    unknownServiceAccount: (): ServiceAccountKey => createServiceAccount(projectId, tokenUrl, 'stranger'),
    /** A valid access token of the registered account, issued without an exchange (a client bringing its own token). */
    issueToken: (): string => authority.issue(serviceAccount.client_email, CLOUD_PLATFORM_SCOPE).accessToken,
    /** Every token issued so far expires now. */
    expireTokens: () => authority.expireAll(),
    createBucket(bucket: string) {
      if (!state.storage.buckets.has(bucket)) state.storage.buckets.set(bucket, new Map());
    },
    /** Stores an object directly (a dataset a test needs without uploading it). */
    putObject: (bucket: string, name: string, data: Buffer | string, contentType = 'application/jsonl') =>
      putObject(state.storage, bucket, name, Buffer.from(data), contentType),
    /** One lifecycle step of a job (by name or numeric id), as a GET of it takes. */
    advance,
    /** Batch prediction jobs: `jobs`, and `advance` (steps without a GET), `fail` (FAILED next step), `expire` (EXPIRED now). */
    batch: { jobs: batchJobs.jobs, advance: batchJobs.advance, fail: batchJobs.fail, expire: batchJobs.expire, refuseRows: batchJobs.refuseRows },
    /** The job's next step ends it FAILED with `error` (default: an internal error). */
    failJob(nameOrId: string, error = { code: RPC_INTERNAL, message: 'Internal error occurred. Please retry in a few minutes.' }) {
      plans.get(idOf(findJob(nameOrId).name))!.forcedError = error;
    },
    /** The next `times` requests matching method and path prefix fail, on the host that owns the path (see `serverFor`). */
    failNext: (method: string, pathPrefix: string, status: number, failOptions?: FailOptions) =>
      serverFor(pathPrefix).failNext(method, pathPrefix, status, failOptions),
    delayNext: (method: string, pathPrefix: string, ms: number, times?: number) => serverFor(pathPrefix).delayNext(method, pathPrefix, ms, times),
    async close() {
      await Promise.all([oauthServer.close(), storageServer.close(), vertexServer.close()]);
    },
  };
}

export type FakeVertex = Awaited<ReturnType<typeof startFakeVertex>>;
