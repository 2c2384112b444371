/**
 * Vertex AI batch prediction for Gemini (`batchPredictionJobs`) in the fake Vertex AI, in the wire
 * format of google.cloud.aiplatform.v1 (batch_prediction_job.proto, job_state.proto) and the
 * "batch prediction from Cloud Storage" guide:
 *
 * - `POST {parent}/batchPredictionJobs`, `GET …/{id}`, `GET …` (pageSize, pageToken, filter),
 *   `POST …/{id}:cancel` (`{}`), on the regional host only;
 * - `model` is a publisher model (`publishers/google/models/{m}`) or a tuned model by its resource
 *   name (`projects/{p}/locations/{l}/models/{id}`, what tuning produces);
 * - input: JSONL objects in the fake GCS, one `{"request": GenerateContentRequest, …other keys}` a
 *   line; output: `{outputUriPrefix}/prediction-model-{time}/predictions.jsonl`, each line the input
 *   line's keys plus `response` (a GenerateContentResponse) and `status` ("" on success, the error
 *   otherwise), `outputInfo.gcsOutputDirectory` naming the folder;
 * - `completionStats` (int64 counts as strings) kept current while the job runs.
 *
 * A job advances one step per GET (or `advance`): PENDING → RUNNING → SUCCEEDED, RUNNING running
 * `rowsPerStep` rows a step and appending them, so cancel (CANCELLING → CANCELLED, error code 1),
 * `expire` (EXPIRED) and `fail` (FAILED) leave the rows already written, as Vertex exports completed
 * rows of a terminated job.
 */
import { randomDigits, type FakeReply } from './kit';
import { putObject, type GcsState } from './gcs';
import { badRequest, enumValue, failedPrecondition, isObject, listPage, protoFields, stringValue, VertexError } from './vertex-proto';

export type BatchJobState =
  'JOB_STATE_PENDING' | 'JOB_STATE_RUNNING' | 'JOB_STATE_SUCCEEDED' | 'JOB_STATE_FAILED' | 'JOB_STATE_CANCELLING' | 'JOB_STATE_CANCELLED' | 'JOB_STATE_EXPIRED';
const TERMINAL: BatchJobState[] = ['JOB_STATE_SUCCEEDED', 'JOB_STATE_FAILED', 'JOB_STATE_CANCELLED', 'JOB_STATE_EXPIRED'];

/** A BatchPredictionJob as Vertex returns it. */
export interface BatchPredictionJob {
  name: string;
  displayName: string;
  model: string;
  inputConfig: { instancesFormat: string; gcsSource: { uris: string[] } };
  outputConfig: { predictionsFormat: string; gcsDestination: { outputUriPrefix: string } };
  state: BatchJobState;
  createTime: string;
  updateTime: string;
  startTime?: string;
  endTime?: string;
  error?: { code: number; message: string };
  outputInfo?: { gcsOutputDirectory: string };
  completionStats?: { successfulCount: string; failedCount: string; incompleteCount: string };
  labels?: Record<string, string>;
  [echoed: string]: unknown;
}

export interface BatchJobOptions {
  storage: GcsState;
  /** `projects/{number}/locations/{location}`. */
  parent: string;
  /** Resolves a job's `model` to what answers it, or throws Vertex's error. */
  resolveModel(model: string): { label: string; modelVersion: string };
  /** The GenerateContentResponse to one request, or a thrown VertexError. */
  answer(label: string, modelVersion: string, request: Record<string, unknown>): Record<string, unknown>;
  settings: { stepsPerPoll: number; batchRowsPerStep: number };
  timestamp(): string;
}

const JOB_FIELDS = [
  'displayName',
  'model',
  'inputConfig',
  'outputConfig',
  'instanceConfig',
  'modelParameters',
  'labels',
  'encryptionSpec',
  'serviceAccount',
  // Output-only fields are accepted and ignored, as Google does.
  'name',
  'state',
  'createTime',
  'updateTime',
  'startTime',
  'endTime',
  'error',
  'outputInfo',
  'completionStats',
];
const ECHOED = ['instanceConfig', 'modelParameters', 'labels', 'encryptionSpec', 'serviceAccount'];
const GCS_URI = /^gs:\/\/([^/]+)\/(.+)$/;
const GCS_PREFIX = /^gs:\/\/([^/]+)(?:\/(.*))?$/;
/** google.rpc.Code values used in a job's `error`. */
const RPC_CANCELLED = 1;
const RPC_DEADLINE_EXCEEDED = 4;

interface Row {
  /** The input line's keys, echoed in the output. */
  line: Record<string, unknown>;
  problem?: string;
}

interface Plan {
  rows: Row[];
  done: number;
  successful: number;
  failed: number;
  forcedError?: { code: number; message: string };
}

const FILTER_FIELDS: Record<string, (job: BatchPredictionJob) => string | undefined> = {
  state: (job) => job.state,
  displayName: (job) => job.displayName,
  model: (job) => job.model,
  createTime: (job) => job.createTime,
};

export function createBatchPredictionJobs(opts: BatchJobOptions) {
  const jobs = new Map<string, BatchPredictionJob>();
  const plans = new Map<string, Plan>();
  let refused: (line: Record<string, unknown>) => boolean = () => false;
  const idOf = (nameOrId: string) => nameOrId.split('/').at(-1)!;

  function readRows(uris: string[]): Row[] {
    return uris.flatMap((uri, u) => {
      const [, bucket, name] = GCS_URI.exec(uri) ?? [];
      const object = bucket ? opts.storage.buckets.get(bucket)?.get(name) : undefined;
      if (!object) throw badRequest(`batch_prediction_job.input_config.gcs_source.uris[${u}]`, `Input ${uri} does not exist or cannot be read.`);
      return object.data
        .toString('utf8')
        .split('\n')
        .filter((line) => line.trim())
        .map((text): Row => {
          try {
            const line: unknown = JSON.parse(text);
            if (isObject(line) && isObject(line.request)) return { line };
            return { line: isObject(line) ? line : {}, problem: 'Each instance must be a JSON object with a "request" object.' };
          } catch {
            return { line: {}, problem: 'Failed to parse the instance: it is not valid JSON.' };
          }
        });
    });
  }

  function checkOutput(value: unknown): BatchPredictionJob['outputConfig'] {
    const where = 'batch_prediction_job.output_config';
    const output = protoFields(value ?? {}, ['predictionsFormat', 'gcsDestination', 'bigqueryDestination'], where);
    if (output.bigqueryDestination !== undefined)
      throw badRequest(`${where}.bigquery_destination`, 'The fake Vertex AI writes predictions to Cloud Storage only.');
    enumValue(output.predictionsFormat, ['jsonl'], 'PredictionsFormat', `${where}.predictions_format`);
    const destination = protoFields(output.gcsDestination ?? {}, ['outputUriPrefix'], `${where}.gcs_destination`);
    const prefix = stringValue(destination.outputUriPrefix, `${where}.gcs_destination.output_uri_prefix`);
    const bucket = GCS_PREFIX.exec(prefix)?.[1];
    if (!bucket || !opts.storage.buckets.has(bucket))
      throw badRequest(`${where}.gcs_destination.output_uri_prefix`, `Output location ${prefix} is not a bucket that exists.`);
    return { predictionsFormat: 'jsonl', gcsDestination: { outputUriPrefix: prefix } };
  }

  function checkInput(value: unknown): BatchPredictionJob['inputConfig'] {
    const where = 'batch_prediction_job.input_config';
    const input = protoFields(value ?? {}, ['instancesFormat', 'gcsSource', 'bigquerySource'], where);
    if (input.bigquerySource !== undefined) throw badRequest(`${where}.bigquery_source`, 'The fake Vertex AI reads instances from Cloud Storage only.');
    enumValue(input.instancesFormat, ['jsonl'], 'InstancesFormat', `${where}.instances_format`);
    const uris = protoFields(input.gcsSource ?? {}, ['uris'], `${where}.gcs_source`).uris;
    if (!Array.isArray(uris) || uris.length === 0) throw badRequest(`${where}.gcs_source.uris`, 'At least one input URI is required.');
    return { instancesFormat: 'jsonl', gcsSource: { uris: uris.map((uri, i) => stringValue(uri, `${where}.gcs_source.uris[${i}]`)) } };
  }

  function create(body: Record<string, unknown>): BatchPredictionJob {
    const input = protoFields(body, JOB_FIELDS, 'batch_prediction_job');
    if (typeof input.displayName !== 'string' || input.displayName === '') {
      throw badRequest('batch_prediction_job.display_name', 'display_name is required.');
    }
    if (input.model === undefined) throw badRequest('batch_prediction_job.model', 'model is required.');
    const model = stringValue(input.model, 'batch_prediction_job.model');
    opts.resolveModel(model);
    const inputConfig = checkInput(input.inputConfig);
    const outputConfig = checkOutput(input.outputConfig);
    const rows = readRows(inputConfig.gcsSource.uris);
    const id = randomDigits(19);
    const now = opts.timestamp();
    const echoed = Object.fromEntries(ECHOED.filter((field) => input[field] !== undefined).map((field) => [field, input[field]]));
    const job: BatchPredictionJob = {
      name: `${opts.parent}/batchPredictionJobs/${id}`,
      displayName: input.displayName,
      model,
      inputConfig,
      outputConfig,
      ...echoed,
      state: 'JOB_STATE_PENDING',
      createTime: now,
      updateTime: now,
    };
    jobs.set(id, job);
    plans.set(id, { rows, done: 0, successful: 0, failed: 0 });
    return job;
  }

  function find(nameOrId: string): BatchPredictionJob {
    const job = jobs.get(idOf(nameOrId));
    if (!job) throw new VertexError(404, `The BatchPredictionJob ${opts.parent}/batchPredictionJobs/${idOf(nameOrId)} does not exist.`);
    return job;
  }

  const stats = (plan: Plan) => ({
    successfulCount: String(plan.successful),
    failedCount: String(plan.failed),
    incompleteCount: String(plan.rows.length - plan.done),
  });

  /** The output line of one row: its keys, the response or the error in `status`. */
  function runRow(job: BatchPredictionJob, row: Row, plan: Plan): Record<string, unknown> {
    if (row.problem || refused(row.line)) {
      plan.failed++;
      return { ...row.line, status: row.problem ?? JSON.stringify({ code: 400, message: 'The model refused this request (a failure the test asked for).' }) };
    }
    try {
      const { label, modelVersion } = opts.resolveModel(job.model);
      const response = opts.answer(label, modelVersion, row.line.request as Record<string, unknown>);
      plan.successful++;
      return { ...row.line, response, status: '' };
    } catch (e) {
      plan.failed++;
      const error = e as VertexError;
      return { ...row.line, status: JSON.stringify({ code: error.status, message: error.message }) };
    }
  }

  function runRows(job: BatchPredictionJob, plan: Plan) {
    const [, bucket, folder] = GCS_PREFIX.exec(job.outputInfo!.gcsOutputDirectory)!;
    const key = `${folder}/predictions.jsonl`;
    const lines = plan.rows.slice(plan.done, plan.done + opts.settings.batchRowsPerStep).map((row) => JSON.stringify(runRow(job, row, plan)) + '\n');
    plan.done += lines.length;
    const before = opts.storage.buckets.get(bucket)?.get(key)?.data ?? Buffer.alloc(0);
    putObject(opts.storage, bucket, key, Buffer.concat([before, Buffer.from(lines.join(''))]), 'application/jsonl');
  }

  function finish(job: BatchPredictionJob, state: BatchJobState, error?: { code: number; message: string }) {
    job.state = state;
    job.endTime = opts.timestamp();
    if (error) job.error = error;
  }

  function start(job: BatchPredictionJob) {
    job.state = 'JOB_STATE_RUNNING';
    job.startTime = opts.timestamp();
    const prefix = job.outputConfig.gcsDestination.outputUriPrefix.replace(/\/$/, '');
    job.outputInfo = { gcsOutputDirectory: `${prefix}/prediction-model-${job.startTime}` };
  }

  /** One step: PENDING → RUNNING → (rows) → SUCCEEDED; CANCELLING → CANCELLED; a forced error ends it FAILED. */
  function step(job: BatchPredictionJob): void {
    const plan = plans.get(idOf(job.name))!;
    if (TERMINAL.includes(job.state)) return;
    if (job.state === 'JOB_STATE_CANCELLING') finish(job, 'JOB_STATE_CANCELLED', { code: RPC_CANCELLED, message: 'CANCELED' });
    else if (plan.forcedError) finish(job, 'JOB_STATE_FAILED', plan.forcedError);
    else if (job.state === 'JOB_STATE_PENDING') start(job);
    else {
      runRows(job, plan);
      if (plan.done === plan.rows.length) finish(job, 'JOB_STATE_SUCCEEDED');
    }
    if (job.state !== 'JOB_STATE_PENDING') job.completionStats = stats(plan);
    job.updateTime = job.endTime ?? opts.timestamp();
  }

  function cancel(job: BatchPredictionJob): Record<string, never> {
    if (TERMINAL.includes(job.state)) throw failedPrecondition(`Cannot cancel batch prediction job ${job.name} in state ${job.state}.`);
    job.state = 'JOB_STATE_CANCELLING';
    job.updateTime = opts.timestamp();
    return {};
  }

  /** The routes under `{parent}/`; undefined for a path that is not a batch prediction job's. */
  function route(method: string, rest: string, url: URL, body: () => Promise<Record<string, unknown>>): Promise<FakeReply> | FakeReply | undefined {
    if (rest === 'batchPredictionJobs' && method === 'POST') return body().then((b) => ({ status: 200, body: create(b) }));
    if (rest === 'batchPredictionJobs' && method === 'GET') {
      return { status: 200, body: listPage([...jobs.values()], url.searchParams, 'batchPredictionJobs', FILTER_FIELDS) };
    }
    const m = /^batchPredictionJobs\/(\d+)(:cancel)?$/.exec(rest);
    if (m && method === 'GET' && !m[2]) {
      const job = find(m[1]);
      for (let i = 0; i < opts.settings.stepsPerPoll; i++) step(job);
      return { status: 200, body: job };
    }
    if (m && method === 'POST' && m[2]) return { status: 200, body: cancel(find(m[1])) };
    return undefined;
  }

  return {
    jobs,
    route,
    /** Rows whose input line `predicate` picks fail (status 400) from now on. */
    refuseRows(predicate: (line: Record<string, unknown>) => boolean) {
      refused = predicate;
    },
    /** One lifecycle step of a job (by name or id) without a GET. */
    advance(nameOrId: string, steps = 1): BatchPredictionJob {
      const job = find(nameOrId);
      for (let i = 0; i < steps; i++) step(job);
      return job;
    },
    /** The job's next step ends it FAILED with `error`. */
    fail(nameOrId: string, error = { code: 13, message: 'Internal error occurred. Please retry in a few minutes.' }) {
      plans.get(idOf(find(nameOrId).name))!.forcedError = error;
    },
    /** The job runs out of time now: EXPIRED, its unfinished rows incomplete. */
    expire(nameOrId: string): BatchPredictionJob {
      const job = find(nameOrId);
      if (!TERMINAL.includes(job.state)) {
        finish(job, 'JOB_STATE_EXPIRED', { code: RPC_DEADLINE_EXCEEDED, message: 'The batch prediction job expired before it finished.' });
        job.completionStats = stats(plans.get(idOf(job.name))!);
      }
      return job;
    },
  };
}
