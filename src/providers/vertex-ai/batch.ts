/**
 * Vertex AI batch prediction (`batchPredictionJobs`, Gemini) as the provider runner's batch service
 * (../batch.ts). The input is `gs://{bucket}/gateway-batches/{batch id}/input.jsonl`, one line a
 * request: `{"custom_id", "request": GenerateContentRequest}` (./chat-mappers.ts). `custom_id` is an
 * extra key Vertex allows; `instanceConfig.excludedFields` keeps it from the model and Vertex copies it
 * onto the output line, which is how results are joined back. Vertex writes
 * `{outputUriPrefix}/prediction-model-…/predictions*.jsonl`; every such file is read.
 *
 * The job runs on the integration's region (the regional host: a tuned model cannot run batch on the
 * global endpoint), naming a Google model `publishers/google/models/{id}` and a tuned model by its
 * model resource (`projects/…/locations/…/models/…`, what tuning produced; its endpoint serves chat
 * only). It carries the gateway's batch id as a label, which `find` filters on after a crash.
 *
 * Client mode (./client-batch.ts) writes the input beside the caller's uploaded file instead
 * (`{object}.batches/{uuid}/`), labels the job `gateway_cbatch`, and uses its resource name as the
 * batch's handle; the job's input URI leads back to the file.
 */
import { Readable } from 'node:stream';
import { z } from 'zod';
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
import { failedLine, succeededLine, textLines } from '../batch-result';
import type { ChatBody } from '../chat-request';
import { urlPath } from '../url';
import { toCompletion, toGenerateRequest } from './chat-mappers';
import { googleDownload, googleFetch, googleUpload, parentPath, STORAGE, storageUrl, VERTEX, vertexUrl, type VertexConnection } from './connection';
import { bucketOf, ENDPOINT_NAME, gatewayFile, gsUri } from './references';
import { gcsObjectListSchema, generateContentSchema, parseAnswer } from './wire';

const PREFIX = 'gateway-batches/';
const LABEL = 'gateway_batch';
/** The label of client-mode jobs (the list filters on it). */
export const CLIENT_LABEL = 'gateway_cbatch';
/** Client mode's batch folder: beside the caller's file, `{its object}.batches/{uuid}/`. */
const CLIENT_FOLDER = /^(.+)\.batches\/[0-9a-f-]{36}\/$/;
const TUNED_MODEL = /^projects\/[a-z0-9-]{1,30}\/locations\/([a-z0-9-]{1,63})\/models\/\d{1,20}(?:@\d{1,10})?$/;
const GOOGLE_MODEL = /^(?:publishers\/google\/models\/)?([a-z0-9][a-z0-9.@_-]{0,127})$/;
const JOB_ID = /^\d{1,20}$/;
/** A job's resource name: its project, location and numeric id. */
export const JOB_NAME = /^projects\/([a-z][a-z0-9-]{4,28}[a-z0-9]|\d{1,20})\/locations\/([a-z0-9-]{1,63})\/batchPredictionJobs\/(\d{1,20})$/;

/** JobState in OpenAI's words (docs/batches.md). */
const STATUS: Readonly<Record<string, ProviderBatchStatus>> = {
  JOB_STATE_UNSPECIFIED: 'validating',
  JOB_STATE_QUEUED: 'validating',
  JOB_STATE_PENDING: 'validating',
  JOB_STATE_RUNNING: 'in_progress',
  JOB_STATE_UPDATING: 'in_progress',
  JOB_STATE_PAUSED: 'in_progress',
  JOB_STATE_SUCCEEDED: 'completed',
  JOB_STATE_PARTIALLY_SUCCEEDED: 'completed',
  JOB_STATE_FAILED: 'failed',
  JOB_STATE_CANCELLING: 'cancelling',
  JOB_STATE_CANCELLED: 'cancelled',
  JOB_STATE_EXPIRED: 'expired',
};
const ENDED = new Set<ProviderBatchStatus>(['completed', 'expired', 'cancelled', 'failed']);

const count = z.union([z.string().regex(/^\d+$/), z.number().int()]).transform(Number);
const jobSchema = z.object({
  name: z.string(),
  state: z.string(),
  model: z.string().optional(),
  inputConfig: z.object({ gcsSource: z.object({ uris: z.array(z.string()).optional() }).optional() }).optional(),
  createTime: z.string().optional(),
  startTime: z.string().optional(),
  endTime: z.string().optional(),
  updateTime: z.string().optional(),
  error: z.object({ code: z.number().optional(), message: z.string().optional() }).optional(),
  completionStats: z.object({ successfulCount: count.optional(), failedCount: count.optional(), incompleteCount: count.optional() }).optional(),
  outputInfo: z.object({ gcsOutputDirectory: z.string().optional() }).optional(),
});
export const jobListSchema = z.object({ batchPredictionJobs: z.array(jobSchema).optional(), nextPageToken: z.string().optional() });

/** The job's `model`: a tuned model as named, a Google model under its publisher; undefined when it is neither. */
function jobModel(model: string): string | undefined {
  if (TUNED_MODEL.test(model)) return model;
  const id = GOOGLE_MODEL.exec(model)?.[1];
  return id ? `publishers/google/models/${id}` : undefined;
}

function accepts(conn: VertexConnection, query: BatchModelQuery): string | null {
  if (!conn.bucket) return 'Vertex AI batch prediction needs the integration’s Cloud Storage bucket (x-gateway-vertex-storage-bucket-name)';
  if (ENDPOINT_NAME.test(query.model)) {
    return 'Vertex AI batch prediction runs a tuned model by its model resource name (projects/…/locations/…/models/…), not by its endpoint';
  }
  const tuned = TUNED_MODEL.exec(query.model);
  if (tuned && (conn.region === 'global' || tuned[1] !== conn.region)) {
    return `Vertex AI runs batch prediction of a tuned model on its own region's endpoint (${tuned[1]}), not on ${conn.region}`;
  }
  return jobModel(query.model) ? null : `Vertex AI batch prediction cannot run the model ${query.model}`;
}

/** The batch's folder: under the gateway's prefix, or in client mode beside the caller's input file. */
function folderOf(conn: VertexConnection, input: BatchUploadInput): string {
  if (input.sourceFileId === undefined) return `${PREFIX}${input.gatewayBatchId}/`;
  return `${gatewayFile(conn, input.sourceFileId).object}.batches/${input.gatewayBatchId}/`;
}

async function upload(conn: VertexConnection, input: BatchUploadInput): Promise<string> {
  const bucket = bucketOf(conn);
  const folder = folderOf(conn, input);
  async function* lines() {
    for await (const request of input.requests()) {
      yield Buffer.from(`${JSON.stringify({ custom_id: request.customId, request: toGenerateRequest(request.body as unknown as ChatBody) })}\n`);
    }
  }
  const url = storageUrl(conn, urlPath`upload/storage/v1/b/${bucket}/o`, { uploadType: 'media', name: `${folder}input.jsonl` });
  await googleUpload(conn, url, Readable.from(lines()), { 'content-type': 'application/jsonl' });
  return folder;
}

export const jobsPath = (conn: VertexConnection) => `${parentPath(conn)}/batchPredictionJobs`;

/** A job's path by its numeric id or its resource name (whose id alone is used: the project and region are the settings'). */
function jobPath(conn: VertexConnection, id: string): string {
  const numeric = JOB_NAME.exec(id)?.[3] ?? id;
  if (!JOB_ID.test(numeric)) throw new GatewayError('not_found', `Vertex AI has no batch prediction job '${id}'`, { code: 'not_found' });
  return `${jobsPath(conn)}/${numeric}`;
}

async function create(conn: VertexConnection, input: BatchCreateInput): Promise<ProviderBatchJob> {
  const bucket = bucketOf(conn);
  const client = CLIENT_FOLDER.test(input.input);
  const json = {
    displayName: `${client ? 'gateway-cbatch' : 'gateway-batch'}-${input.gatewayBatchId}`,
    model: jobModel(input.model),
    inputConfig: { instancesFormat: 'jsonl', gcsSource: { uris: [gsUri({ bucket, object: `${input.input}input.jsonl` })] } },
    outputConfig: { predictionsFormat: 'jsonl', gcsDestination: { outputUriPrefix: gsUri({ bucket, object: `${input.input}output` }) } },
    instanceConfig: { excludedFields: ['custom_id'] },
    labels: { [client ? CLIENT_LABEL : LABEL]: input.gatewayBatchId },
  };
  const answer = await googleFetch(conn, VERTEX, { method: 'POST', url: vertexUrl(conn, jobsPath(conn)), json });
  return toJob(conn, parseAnswer(jobSchema, answer, VERTEX, 'batch prediction job'));
}

async function find(conn: VertexConnection, gatewayBatchId: string): Promise<ProviderBatchJob | undefined> {
  const url = vertexUrl(conn, jobsPath(conn), { filter: `labels.${LABEL}="${gatewayBatchId}"` });
  const list = parseAnswer(jobListSchema, await googleFetch(conn, VERTEX, { method: 'GET', url }), VERTEX, 'batch prediction job list');
  const job = list.batchPredictionJobs?.[0];
  return job ? toJob(conn, job) : undefined;
}

/** A job in OpenAI's words, times in seconds; in client mode the caller's file its input lies beside. */
export function toJob(conn: VertexConnection, job: z.output<typeof jobSchema>): ProviderBatchJob {
  const status = STATUS[job.state] ?? 'validating';
  const stats = job.completionStats;
  const completed = stats?.successfulCount ?? 0;
  const failed = stats?.failedCount ?? 0;
  const input = job.inputConfig?.gcsSource?.uris?.[0] ?? '';
  const prefix = `gs://${conn.bucket ?? ''}/`;
  const folder = input.startsWith(prefix) ? CLIENT_FOLDER.exec(input.slice(prefix.length, input.lastIndexOf('/') + 1))?.[1] : undefined;
  return {
    // The handle: the resource name (hosted batches keep the numeric id, which `get` takes too).
    id: job.name,
    status,
    requestCounts: stats ? { total: completed + failed + (stats.incompleteCount ?? 0), completed, failed } : null,
    error: status === 'failed' ? { code: 'provider_failed', message: `${VERTEX}: ${job.error?.message ?? 'the batch prediction job failed'}` } : null,
    results: { output: job.outputInfo?.gcsOutputDirectory ?? null, model: job.model ?? null, bucket: conn.bucket ?? null },
    view: {
      createdAt: unixSeconds(job.createTime) ?? 0,
      times: statusTimes(status, { started: unixSeconds(job.startTime), changed: unixSeconds(job.endTime ?? job.updateTime) }),
      model: job.model?.replace(/^publishers\/google\/models\//, '') ?? null,
      inputFileId: folder === undefined ? '' : gsUri({ bucket: conn.bucket ?? '', object: folder }),
      metadata: null,
      usage: null,
    },
  };
}

async function get(conn: VertexConnection, id: string): Promise<ProviderBatchJob> {
  const answer = await googleFetch(conn, VERTEX, { method: 'GET', url: vertexUrl(conn, jobPath(conn, id)) });
  return toJob(conn, parseAnswer(jobSchema, answer, VERTEX, 'batch prediction job'));
}

async function cancel(conn: VertexConnection, id: string): Promise<ProviderBatchJob> {
  const job = await get(conn, id);
  if (ENDED.has(job.status) || job.status === 'cancelling') return job;
  await googleFetch(conn, VERTEX, { method: 'POST', url: vertexUrl(conn, `${jobPath(conn, id)}:cancel`), json: {}, idempotent: true });
  return get(conn, id);
}

/** The prediction files of the job's output folder (only in the integration's bucket). */
async function predictionFiles(conn: VertexConnection, directory: string): Promise<string[]> {
  const bucket = bucketOf(conn);
  const folder = directory.startsWith(`gs://${bucket}/`) ? `${directory.slice(`gs://${bucket}/`.length)}/` : undefined;
  if (!folder) throw new GatewayError('provider', `${VERTEX} wrote the results outside the integration's bucket`, { status: 502 });
  const names: string[] = [];
  let pageToken: string | undefined;
  do {
    const url = storageUrl(conn, urlPath`storage/v1/b/${bucket}/o`, { prefix: folder, pageToken });
    const list = parseAnswer(gcsObjectListSchema, await googleFetch(conn, STORAGE, { method: 'GET', url }), STORAGE, 'object list');
    names.push(...(list.items ?? []).map((o) => o.name).filter((name) => /\/predictions[^/]*\.jsonl$/.test(name)));
    pageToken = list.nextPageToken;
  } while (pageToken);
  return names.sort();
}

interface PredictionLine {
  custom_id?: unknown;
  response?: unknown;
  status?: unknown;
}

/** A failed row's status: Vertex's error text (a JSON `{code, message}` gives its code). */
function failureOf(status: string): { code: number; message: string } {
  try {
    const parsed = JSON.parse(status) as { code?: unknown; message?: unknown };
    if (typeof parsed.code === 'number' && parsed.code >= 400 && parsed.code < 600)
      return { code: parsed.code, message: typeof parsed.message === 'string' ? parsed.message : status };
  } catch {
    // a plain message
  }
  return { code: 400, message: status };
}

function resultOf(line: PredictionLine, model: string): BatchResultLine | undefined {
  if (typeof line.custom_id !== 'string') return undefined;
  const status = typeof line.status === 'string' ? line.status : '';
  const response = generateContentSchema.safeParse(line.response);
  if (status === '' && response.success) return succeededLine(line.custom_id, response.data.responseId ?? '', toCompletion(model, response.data));
  const failure = failureOf(status || 'Vertex AI returned no response for this request');
  return failedLine(line.custom_id, '', failure.code, `${VERTEX}: ${failure.message}`);
}

async function* output(conn: VertexConnection, job: ProviderBatchJob): AsyncGenerator<BatchResultLine> {
  const directory = job.results.output;
  if (!directory) return;
  const model = (job.results.model ?? '').replace(/^publishers\/google\/models\//, '');
  const bucket = bucketOf(conn);
  for (const name of await predictionFiles(conn, directory)) {
    const url = storageUrl(conn, urlPath`storage/v1/b/${bucket}/o/${name}`, { alt: 'media' });
    const { content } = await googleDownload(conn, STORAGE, { method: 'GET', url });
    for await (const text of textLines(content.stream)) {
      const result = resultOf(JSON.parse(text) as PredictionLine, model);
      if (result) yield result;
    }
  }
}

export const vertexBatch: ProviderBatchSupport<VertexConnection> = { accepts, upload, create, find, get, cancel, output };
