/**
 * Fireworks batch inference (`batchInferenceJobs`) as the provider runner's batch service
 * (../batch.ts). The requests go to a dataset of `{"custom_id", "body"}` lines (the body without
 * `model`: the job names it), uploaded as fine-tuning datasets are; the job writes an output dataset
 * whose files hold `{"custom_id", "response"}` and `{"custom_id", "error"}` lines, all of them read.
 *
 * Dataset and job ids derive from the gateway's batch id, so a create repeated after a crash is
 * Fireworks' ALREADY_EXISTS and the job is adopted; `find` is a GET of that id. Fireworks' API has no
 * cancel: cancelling deletes the job, and what it had written stays in the output dataset. Fireworks
 * does not document batch jobs on fine-tuned (LoRA) models, which need a deployment of their own:
 * those batches are the gateway runner's.
 */
import { Readable } from 'node:stream';
import { GatewayError } from '../../errors';
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
import { controlRequest, resourceName, resourcePath, slug, TITLE, type FireworksConnection } from './connection';
import { fileContent } from './datasets';
import { batchJobSchema, type FireworksBatchJob } from './schemas';
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

/** The ids a batch's dataset and job get: its gateway id as a Fireworks resource id. */
const idsOf = (gatewayBatchId: string) => {
  const id = `gw-batch-${slug(gatewayBatchId, 50)}`;
  return { input: `${id}-input`, output: `${id}-output`, job: id };
};

function accepts(_conn: FireworksConnection, query: BatchModelQuery): string | null {
  if (BASE_MODEL.test(query.model)) return null;
  return `${TITLE} batch inference runs its own base models (accounts/fireworks/models/…), not ${query.model}`;
}

const isStatus = (err: unknown, status: number) => err instanceof GatewayError && err.status === status;

async function upload(conn: FireworksConnection, input: BatchUploadInput): Promise<string> {
  const id = idsOf(input.gatewayBatchId).input;
  // An upload interrupted earlier left the dataset half made: it starts again.
  await controlRequest(conn, { method: 'DELETE', path: resourcePath(conn, 'datasets', id), idempotent: true }).catch((err: unknown) => {
    if (!isStatus(err, 404)) throw err;
  });
  await controlRequest(conn, {
    method: 'POST',
    path: '/datasets',
    json: { datasetId: id, dataset: { displayName: `Batch ${input.gatewayBatchId}`, userUploaded: {} } },
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

function toJob(job: FireworksBatchJob): ProviderBatchJob {
  const status = STATUS[job.state ?? ''] ?? 'validating';
  const progress = job.jobProgress;
  const total = progress?.totalInputRequests ?? 0;
  return {
    id: job.name.slice(job.name.lastIndexOf('/') + 1),
    status,
    requestCounts: progress ? { total, completed: progress.successfullyProcessedRequests ?? 0, failed: progress.failedRequests ?? 0 } : null,
    error: status === 'failed' ? { code: 'provider_failed', message: `${TITLE}: ${job.status?.message || 'the batch inference job failed'}` } : null,
    results: { output: job.outputDatasetId ?? null, model: job.model ?? null },
  };
}

async function get(conn: FireworksConnection, id: string): Promise<ProviderBatchJob> {
  return toJob(await controlRequest(conn, { answer: batchJobSchema, method: 'GET', path: resourcePath(conn, 'batchInferenceJobs', id) }));
}

async function create(conn: FireworksConnection, input: BatchCreateInput): Promise<ProviderBatchJob> {
  const ids = idsOf(input.gatewayBatchId);
  const json = {
    displayName: `Gateway batch ${input.gatewayBatchId}`.slice(0, 63),
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
    if (isStatus(err, 409)) return get(conn, ids.job);
    throw err;
  }
}

async function find(conn: FireworksConnection, gatewayBatchId: string): Promise<ProviderBatchJob | undefined> {
  try {
    return await get(conn, idsOf(gatewayBatchId).job);
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
  return { ...job, status: 'cancelled' };
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
