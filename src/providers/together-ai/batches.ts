/**
 * Together's Batch API: `{custom_id, body}` lines uploaded with purpose `batch-api`, `POST /batches`
 * (201 `{job}`), `GET /batches/{id}`, `POST /batches/{id}/cancel`, and `GET /batches` (a bare array).
 * Together reports no request counts (only `progress`): they come from the results once read. Its
 * statuses are OpenAI's upper-cased, without `cancelling` (a cancel ends the job at once). Together
 * keeps nothing with a job that could carry the gateway's id, so `find` goes through the input file,
 * named after the gateway batch (uploaded once: its reference is stored before the create).
 */
import type { BatchResultLine, BatchTimeName, ProviderBatchJob, ProviderBatchStatus, ProviderBatchSupport } from '../batch';
import { pageOf } from '../paging';
import { jsonLines, jsonLinesOf } from '../batch-jsonl';
import { apiDownload, apiRequest } from '../api';
import { urlPath } from '../url';
import { filePath, type TogetherConnection } from './connection';
import { parseAnswer } from '../answer';
import {
  togetherBatchCreatedSchema,
  togetherBatchListSchema,
  togetherBatchResultSchema,
  togetherBatchSchema,
  togetherFileListSchema,
  type TogetherBatch,
} from './schemas';
import { uploadFile } from './files';

const STATUSES: Record<string, ProviderBatchStatus> = {
  VALIDATING: 'validating',
  IN_PROGRESS: 'in_progress',
  COMPLETED: 'completed',
  FAILED: 'failed',
  EXPIRED: 'expired',
  CANCELLED: 'cancelled',
  CANCELLING: 'cancelling',
};

const batchPath = (id: string, suffix = '') => urlPath`/batches/${id}` + suffix;
const inputName = (gatewayBatchId: string) => `batch_${gatewayBatchId}.jsonl`;
/** Client mode names the input it writes after the caller's file, which `describe` reads back from the name. */
const SOURCE_PREFIX = 'batch-input_';
const sourceName = (fileId: string) => `${SOURCE_PREFIX}${fileId}.jsonl`;
const FILE_ID = /^file-[A-Za-z0-9_-]{1,128}$/;
const BATCH_ID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

export const togetherBatches: ProviderBatchSupport<TogetherConnection> = {
  // Fine-tuned (LoRA) models in Together's batch service are not documented: those run on the gateway.
  accepts: (_conn, query) => (query.hosted ? "Together AI's batch service is not documented for fine-tuned models" : null),
  async upload(conn, input) {
    const line = ({ customId, body }: { customId: string; body: Record<string, unknown> }) => ({ custom_id: customId, body: { ...body, model: input.model } });
    const filename = input.sourceFileId === undefined ? inputName(input.gatewayBatchId) : sourceName(input.sourceFileId);
    return (await uploadFile(conn, { filename, purpose: 'batch-api', open: jsonLines(input.requests, line) })).id;
  },
  async create(conn, input) {
    const body = { endpoint: '/v1/chat/completions', input_file_id: input.input, completion_window: '24h', model_id: input.model };
    const created = await apiRequest(conn, { answer: togetherBatchCreatedSchema, method: 'POST', path: '/batches', json: body });
    return toJob(created.job);
  },
  async find(conn, gatewayBatchId) {
    const files = await apiRequest(conn, { answer: togetherFileListSchema, method: 'GET', path: '/files' });
    const inputs = new Set((files.data ?? []).filter((f) => f.filename === inputName(gatewayBatchId) && f.purpose === 'batch-api').map((f) => f.id));
    if (!inputs.size) return undefined;
    const batches = await apiRequest(conn, { answer: togetherBatchListSchema, method: 'GET', path: '/batches' });
    const mine = batches.find((b) => typeof b.input_file_id === 'string' && inputs.has(b.input_file_id));
    return mine && toJob(mine);
  },
  get: async (conn, id) => toJob(await apiRequest(conn, { answer: togetherBatchSchema, method: 'GET', path: batchPath(id) })),
  cancel: async (conn, id) => toJob(await apiRequest(conn, { answer: togetherBatchSchema, method: 'POST', path: batchPath(id, '/cancel'), idempotent: true })),
  output: (conn, job) => outputLines(conn, job),
  client: {
    inputPurpose: 'batch-api',
    limits: { maxRequests: 50_000, maxBytes: 100 * 1024 * 1024 },
    // Together lists every batch at once, in no documented order: newest first here, paged by id.
    async list(conn, page) {
      const jobs = (await apiRequest(conn, { answer: togetherBatchListSchema, method: 'GET', path: '/batches' })).map(toJob);
      return pageOf(
        jobs.sort((a, b) => (b.view?.createdAt ?? 0) - (a.view?.createdAt ?? 0)),
        page,
      );
    },
    ownsHandle: (_conn, kind, handle) => (kind === 'batch' ? BATCH_ID : FILE_ID).test(handle),
    readInput: async (conn, fileId) => (await apiDownload(conn, filePath(fileId, '/content'))).stream,
    describe: async (conn, jobs) => {
      const files = await apiRequest(conn, { answer: togetherFileListSchema, method: 'GET', path: '/files' });
      const names = new Map((files.data ?? []).map((f) => [f.id, f.filename]));
      return jobs.map((job) =>
        job.view ? { ...job, view: { ...job.view, inputFileId: sourceOf(names.get(job.view.inputFileId)) ?? job.view.inputFileId } } : job,
      );
    },
  },
};

/** The caller's file a client-mode input was written from, by its name. */
function sourceOf(filename: string | undefined): string | null {
  const id = filename?.startsWith(SOURCE_PREFIX) ? filename.slice(SOURCE_PREFIX.length).replace(/\.jsonl$/, '') : null;
  return id !== null && FILE_ID.test(id) ? id : null;
}

function toJob(batch: TogetherBatch): ProviderBatchJob {
  const status = STATUSES[batch.status.toUpperCase()] ?? 'in_progress';
  return {
    id: batch.id,
    status,
    requestCounts: null,
    error: status === 'failed' ? { code: 'provider_failed', message: batch.error || 'Together AI failed the batch' } : null,
    results: { output: batch.output_file_id ?? null, error: batch.error_file_id ?? null },
    view: {
      createdAt: seconds(batch.created_at) ?? 0,
      times: {
        ...present('expires_at', seconds(batch.job_deadline)),
        ...(status === 'in_progress' || status === 'cancelling' ? {} : present(ENDED_AT[status], seconds(batch.completed_at))),
      },
      model: batch.model_id ?? null,
      inputFileId: batch.input_file_id ?? '',
      metadata: null,
      usage: null,
    },
  };
}

/** Together's one end time (`completed_at`) under OpenAI's name for how the batch ended. */
const ENDED_AT: Record<Exclude<ProviderBatchStatus, 'in_progress' | 'cancelling'>, BatchTimeName | null> = {
  validating: null,
  finalizing: null,
  completed: 'completed_at',
  failed: 'failed_at',
  expired: 'expired_at',
  cancelled: 'cancelled_at',
};

const present = (name: BatchTimeName | null, value: number | null) => (name === null || value === null ? {} : { [name]: value });

/** Unix seconds of Together's ISO date-times; null when absent or unreadable. */
function seconds(iso: string | null | undefined): number | null {
  const ms = iso ? Date.parse(iso) : NaN;
  return Number.isNaN(ms) ? null : Math.floor(ms / 1000);
}

async function* outputLines(conn: TogetherConnection, job: ProviderBatchJob): AsyncGenerator<BatchResultLine> {
  for (const id of [job.results.output, job.results.error]) {
    if (!id) continue;
    const content = await apiDownload(conn, filePath(id, '/content'));
    for await (const line of jsonLinesOf(content.stream, conn.title)) yield toResultLine(line, conn.title);
  }
}

/**
 * A result as Together writes it: `{custom_id, response: {status_code, body}}`, or a failure as
 * `{custom_id, error: {message, code}}` (or a bare string); made OpenAI's `BatchRequestOutput`.
 */
function toResultLine(value: Record<string, unknown>, title: string): BatchResultLine {
  const line = parseAnswer(togetherBatchResultSchema, value, title, 'batch result line');
  const customId = line.custom_id;
  const id = line.id ?? `batch_req_${customId}`;
  const { response } = line;
  if (response && line.error == null) {
    const body = response.body;
    const requestId = response.request_id ?? (isRecord(body) && typeof body.id === 'string' ? body.id : id);
    return { id, custom_id: customId, response: { status_code: response.status_code ?? 200, request_id: requestId, body }, error: null };
  }
  const error = typeof line.error === 'string' || line.error == null ? { message: line.error, code: null } : line.error;
  const message = error.message ?? `${title} could not run the request`;
  const code = error.code ?? null;
  if (typeof code === 'number') {
    // A request the model service answered with an error status: as OpenAI writes it, the status and an error body.
    const body = { error: { message, type: code >= 500 ? 'server_error' : 'invalid_request_error', param: null, code: null } };
    return { id, custom_id: customId, response: { status_code: code, request_id: id, body }, error: null };
  }
  return { id, custom_id: customId, response: null, error: { code: code ?? 'request_failed', message } };
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
