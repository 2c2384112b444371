/**
 * Fireworks batch inference (`batchInferenceJobs`) as the provider runner's batch service
 * (../batch.ts). The requests go to a dataset of `{"custom_id", "body"}` lines (the body without
 * `model`: the job names it), uploaded as fine-tuning datasets are; the job writes an output dataset
 * whose files hold `{"custom_id", "response"}` and `{"custom_id", "error"}` lines, all of them read.
 *
 * Dataset and job ids derive from the gateway's batch id, so a create repeated after a crash is
 * Fireworks' ALREADY_EXISTS and the job is adopted; `find` is a GET of that id. Fireworks' API has no
 * cancel: cancelling deletes the job, and what it had written stays in the output dataset (a job
 * then no longer found is answered from its datasets, as cancelled). Fireworks does not document batch
 * jobs on fine-tuned (LoRA) models, which need a deployment of their own: those batches are the
 * gateway runner's.
 *
 * Client mode (./client-batch.ts) names its datasets and job `gw-cbatch-…`, the translated dataset
 * and the job carrying the caller's input dataset as display name (how the job leads back to it);
 * the job's resource name is the batch's handle.
 */
import { Readable } from 'node:stream';
import { GatewayError } from '../../errors';
import { statusTimes, unixSeconds } from '../batch-times';
import type {
  BatchCreateInput,
  BatchModelQuery,
  BatchResultLine,
  BatchUploadInput,
  ProviderBatchJob,
  ProviderBatchStatus,
  ProviderBatchSupport,
} from '../batch';
import { answeredLine, failedLine, textLines } from '../batch-result';
import { controlRequest, RESOURCE_ID, resourceName, resourcePath, shortId, slug, TITLE, type FireworksConnection } from './connection';
import { fileContent } from './datasets';
import { batchJobSchema, datasetSchema, type FireworksBatchJob } from './schemas';
import { withExactSize } from './spool';
import { uploadDatasetContent } from './upload-file';

const BASE_MODEL = /^accounts\/fireworks\/models\/[a-z0-9][a-z0-9._-]{0,127}$/;

/** JobState in OpenAI's words (docs/batches.md). */
const STATUS: Readonly<Record<string, ProviderBatchStatus>> = {
  JOB_STATE_VALIDATING: 'validating',
  JOB_STATE_CREATING: 'validating',
  JOB_STATE_CREATING_INPUT_DATASET: 'validating',
  JOB_STATE_PENDING: 'validating',
  JOB_STATE_RE_QUEUEING: 'validating',
  JOB_STATE_IDLE: 'validating',
  JOB_STATE_RUNNING: 'in_progress',
  JOB_STATE_PAUSED: 'in_progress',
  JOB_STATE_WRITING_RESULTS: 'finalizing',
  JOB_STATE_COMPLETED: 'completed',
  JOB_STATE_EARLY_STOPPED: 'completed',
  JOB_STATE_FAILED: 'failed',
  JOB_STATE_EXPIRED: 'expired',
  JOB_STATE_CANCELLING: 'cancelling',
  JOB_STATE_CANCELLED: 'cancelled',
  JOB_STATE_DELETING: 'cancelled',
  JOB_STATE_DELETING_CLEANING_UP: 'cancelled',
};

/** Client-mode jobs' ids start so (the list keeps these only). */
export const CLIENT_JOB_PREFIX = 'gw-cbatch-';

/** The ids a batch's datasets and job get: its gateway id as a Fireworks resource id (client mode's prefixed apart). */
const idsOf = (gatewayBatchId: string, client = false) => derivedIds(`${client ? CLIENT_JOB_PREFIX : 'gw-batch-'}${slug(gatewayBatchId, 50)}`);
const derivedIds = (job: string) => ({ input: `${job}-input`, output: `${job}-output`, job });

/** What Fireworks answers instead of a cancel it does not have (said in the batch's `errors`). */
export const NO_CANCEL = {
  code: 'provider_has_no_cancel',
  message: `${TITLE} has no cancel for batch inference jobs: the gateway deleted the job instead. What it had written stays in its output dataset (the output and error files).`,
};

function accepts(_conn: FireworksConnection, query: BatchModelQuery): string | null {
  if (BASE_MODEL.test(query.model)) return null;
  return `${TITLE} batch inference runs its own base models (accounts/fireworks/models/…), not ${query.model}`;
}

const isStatus = (err: unknown, status: number) => err instanceof GatewayError && err.status === status;

async function upload(conn: FireworksConnection, input: BatchUploadInput): Promise<string> {
  const client = input.sourceFileId !== undefined;
  const id = idsOf(input.gatewayBatchId, client).input;
  // An upload interrupted earlier left the dataset half made: it starts again.
  await controlRequest(conn, { method: 'DELETE', path: resourcePath(conn, 'datasets', id), idempotent: true }).catch((err: unknown) => {
    if (!isStatus(err, 404)) throw err;
  });
  await controlRequest(conn, {
    method: 'POST',
    path: '/datasets',
    json: { datasetId: id, dataset: { displayName: input.sourceFileId ?? `Batch ${input.gatewayBatchId}`, userUploaded: {} } },
  });
  async function* lines() {
    for await (const request of input.requests()) {
      const { model: _model, ...body } = request.body;
      yield Buffer.from(`${JSON.stringify({ custom_id: request.customId, body })}\n`);
    }
  }
  const content = { filename: 'requests.jsonl', purpose: 'batch', open: () => Readable.from(lines()) };
  await withExactSize(content, (sized) => uploadDatasetContent(conn, id, content.filename, sized));
  return resourceName(conn, 'datasets', id);
}

/** A job in OpenAI's words, times in seconds; `notice` for one deleted by a cancel. */
export function toJob(job: FireworksBatchJob, notice: ProviderBatchJob['error'] = null): ProviderBatchJob {
  const status = STATUS[job.state ?? ''] ?? 'validating';
  const progress = job.jobProgress;
  const total = progress?.totalInputRequests ?? 0;
  const client = job.name.slice(job.name.lastIndexOf('/') + 1).startsWith(CLIENT_JOB_PREFIX);
  return {
    // The handle: the resource name (hosted batches keep the short id, which `get` takes too).
    id: job.name,
    status,
    requestCounts: progress ? { total, completed: progress.successfullyProcessedRequests ?? 0, failed: progress.failedRequests ?? 0 } : null,
    error: status === 'failed' ? { code: 'provider_failed', message: `${TITLE}: ${job.status?.message || 'the batch inference job failed'}` } : notice,
    results: { output: job.outputDatasetId ?? null, model: job.model ?? null },
    view: {
      createdAt: unixSeconds(job.createTime) ?? 0,
      times: statusTimes(status, { changed: job.updateTime ? unixSeconds(job.updateTime) : undefined }),
      model: job.model ?? null,
      inputFileId: client ? (job.displayName ?? '') : '',
      metadata: null,
      usage: progress ? { inputTokens: progress.inputTokens ?? 0, outputTokens: progress.outputTokens ?? 0 } : null,
    },
  };
}

/** A job by its resource name (the handle) or short id; one deleted by a cancel is answered from its datasets. */
async function get(conn: FireworksConnection, id: string): Promise<ProviderBatchJob> {
  try {
    return toJob(await controlRequest(conn, { answer: batchJobSchema, method: 'GET', path: resourcePath(conn, 'batchInferenceJobs', id) }));
  } catch (err) {
    if (!isStatus(err, 404)) throw err;
    return deletedJob(conn, id, err);
  }
}

/** A job gone after a cancel (Fireworks deletes, it does not stop): cancelled, with what its translated input dataset says. */
async function deletedJob(conn: FireworksConnection, id: string, notFound: unknown): Promise<ProviderBatchJob> {
  const short = shortId(conn, 'batchInferenceJobs', id);
  const ids = derivedIds(short);
  if (!RESOURCE_ID.test(ids.input)) throw notFound;
  const input = await controlRequest(conn, { answer: datasetSchema, method: 'GET', path: resourcePath(conn, 'datasets', ids.input) }).catch(() => {
    throw notFound;
  });
  const name = resourceName(conn, 'batchInferenceJobs', short);
  return toJob(
    {
      name,
      displayName: input.displayName,
      createTime: input.createTime,
      state: 'JOB_STATE_CANCELLED',
      outputDatasetId: resourceName(conn, 'datasets', ids.output),
    },
    NO_CANCEL,
  );
}

/** The caller's dataset a client-mode batch's input was translated from (the translated dataset's display name); undefined for a hosted batch. */
async function sourceOf(conn: FireworksConnection, input: string): Promise<string | undefined> {
  if (!shortId(conn, 'datasets', input).startsWith(CLIENT_JOB_PREFIX)) return undefined;
  return (await controlRequest(conn, { answer: datasetSchema, method: 'GET', path: resourcePath(conn, 'datasets', input) })).displayName;
}

async function create(conn: FireworksConnection, input: BatchCreateInput): Promise<ProviderBatchJob> {
  const source = await sourceOf(conn, input.input);
  const ids = idsOf(input.gatewayBatchId, source !== undefined);
  const json = {
    displayName: source ?? `Gateway batch ${input.gatewayBatchId}`.slice(0, 63),
    model: input.model,
    inputDatasetId: input.input,
    outputDatasetId: resourceName(conn, 'datasets', ids.output),
  };
  try {
    return toJob(
      await controlRequest(conn, { answer: batchJobSchema, method: 'POST', path: '/batchInferenceJobs', query: { batchInferenceJobId: ids.job }, json }),
    );
  } catch (err) {
    // The job of an earlier attempt: adopted.
    if (isStatus(err, 409)) return get(conn, resourceName(conn, 'batchInferenceJobs', ids.job));
    throw err;
  }
}

async function find(conn: FireworksConnection, gatewayBatchId: string): Promise<ProviderBatchJob | undefined> {
  try {
    return await get(conn, resourceName(conn, 'batchInferenceJobs', idsOf(gatewayBatchId).job));
  } catch (err) {
    if (isStatus(err, 404)) return undefined;
    throw err;
  }
}

/** No cancel in Fireworks' API: the job is deleted, its output dataset kept with what it wrote. */
async function cancel(conn: FireworksConnection, id: string): Promise<ProviderBatchJob> {
  const job = await get(conn, id);
  if (['completed', 'failed', 'expired', 'cancelled'].includes(job.status)) return job;
  await controlRequest(conn, { method: 'DELETE', path: resourcePath(conn, 'batchInferenceJobs', id), idempotent: true });
  return { ...job, status: 'cancelled', error: NO_CANCEL };
}

interface OutputLine {
  custom_id?: unknown;
  response?: { id?: string; usage?: unknown } & Record<string, unknown>;
  error?: { code?: unknown; message?: unknown };
}

/** An output line as OpenAI's result line: Fireworks' answers are already `chat.completion`s. */
function resultOf(line: OutputLine, model: string): BatchResultLine | undefined {
  if (typeof line.custom_id !== 'string') return undefined;
  if (line.response && typeof line.response === 'object') {
    const body = { ...line.response, object: 'chat.completion', model: line.response.model ?? model };
    return answeredLine(line.custom_id, line.response.id ?? '', body);
  }
  const code = typeof line.error?.code === 'number' && line.error.code >= 400 && line.error.code < 600 ? line.error.code : 500;
  return failedLine(line.custom_id, '', code, `${TITLE}: ${typeof line.error?.message === 'string' ? line.error.message : 'the request failed'}`);
}

async function* output(conn: FireworksConnection, job: ProviderBatchJob): AsyncGenerator<BatchResultLine> {
  const dataset = job.results.output;
  if (!dataset) return;
  let content;
  try {
    content = await fileContent(conn, dataset);
  } catch (err) {
    // A job deleted (cancelled) before it wrote anything leaves an empty output dataset.
    if (isStatus(err, 404)) return;
    throw err;
  }
  for await (const text of textLines(content.stream)) {
    const result = resultOf(JSON.parse(text) as OutputLine, job.results.model ?? '');
    if (result) yield result;
  }
}

export const fireworksBatch: ProviderBatchSupport<FireworksConnection> = { accepts, upload, create, find, get, cancel, output };
