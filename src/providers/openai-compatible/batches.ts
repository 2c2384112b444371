/**
 * OpenAI's Batch API (`/batches`, input and output through `/files`), shared by OpenAI and Azure
 * OpenAI. The input lines go as written, `body.model` set to the connection's batch model (OpenAI:
 * the batch's model; Azure: the Global-Batch deployment); the gateway batch id travels in the
 * batch's `metadata`, where `find` looks for it. Results are already OpenAI's output lines.
 */
import { GatewayError, providerCode } from '../../errors';
import type {
  BatchCreateInput,
  BatchInputLimits,
  BatchResultLine,
  BatchTimeName,
  BatchUploadInput,
  ProviderBatchJob,
  ProviderBatchStatus,
  ProviderBatchSupport,
} from '../batch';
import { PROVIDER_BATCH_STATUSES } from '../batch';
import { jsonLines, jsonLinesOf } from '../batch-jsonl';
import { apiDownload, apiRequest } from '../api';
import { urlPath } from '../url';
import { filePath, pageQuery, type OpenAICompatibleConnection } from './connection';
import { toPage } from './mappers';
import { getFile } from './files';
import { parseAnswer } from '../answer';
import { openAIBatchListSchema, openAIBatchResultSchema, openAIBatchSchema, type OpenAIBatch } from './schemas';
import { uploadFile } from './upload-file';

/** The metadata key that carries the gateway's batch id (see find). */
export const GATEWAY_BATCH_ID_METADATA_KEY = 'gateway_batch_id';
const MAX_LOOKUP_PAGES = 5;

/** What differs between OpenAI's and Azure's batch service. */
export interface OpenAIBatchWire<C extends OpenAICompatibleConnection> {
  /** The create call's `endpoint` (Azure's is `/chat/completions`). */
  endpoint: string;
  /** The `model` every line is sent with. */
  model(conn: C, model: string): string;
  /** Azure processes an uploaded file before a batch may use it. */
  waitForFile: boolean;
  /** The limits of one input file where they are not OpenAI's (Azure: 100 000 requests). */
  limits?: BatchInputLimits;
}

const batchPath = (id: string, suffix = '') => urlPath`/batches/${id}` + suffix;

/** The steps of batch.ts over OpenAI's wire; `accepts` is each provider's own. */
export function openAIBatchSteps<C extends OpenAICompatibleConnection>(
  wire: OpenAIBatchWire<C>,
  accepts: ProviderBatchSupport<C>['accepts'],
): ProviderBatchSupport<C> {
  return {
    accepts,
    async upload(conn, input: BatchUploadInput) {
      const model = wire.model(conn, input.model);
      const line = ({ customId, body }: { customId: string; body: Record<string, unknown> }) => ({
        custom_id: customId,
        method: 'POST',
        url: '/v1/chat/completions',
        body: { ...body, model },
      });
      const file = await uploadFile(conn, { filename: `batch_${input.gatewayBatchId}.jsonl`, purpose: 'batch', open: jsonLines(input.requests, line) });
      return file.id;
    },
    async create(conn, input: BatchCreateInput) {
      if (wire.waitForFile) {
        const file = await getFile(conn, input.input);
        if (file.status === 'error')
          throw new GatewayError('provider', `${conn.title} could not process the batch input file: ${file.statusDetails ?? 'no reason given'}`, {
            status: 400,
            code: providerCode('invalid_input_file'),
          });
        // Not yet processed: a transient answer, so the runner tries again at its next step.
        if (file.status !== 'processed') throw new GatewayError('provider', `${conn.title} is still processing the batch input file`, { status: 503 });
      }
      const body = {
        input_file_id: input.input,
        endpoint: wire.endpoint,
        completion_window: '24h',
        metadata: input.metadata !== undefined ? input.metadata : { [GATEWAY_BATCH_ID_METADATA_KEY]: input.gatewayBatchId },
      };
      return toJob(await apiRequest(conn, { answer: openAIBatchSchema, method: 'POST', path: '/batches', json: body }));
    },
    async find(conn, gatewayBatchId) {
      let after: string | undefined;
      for (let page = 0; page < MAX_LOOKUP_PAGES; page++) {
        const found = await apiRequest(conn, { answer: openAIBatchListSchema, method: 'GET', path: '/batches', query: { limit: 100, after } });
        const mine = found.data.find((b) => b.metadata?.[GATEWAY_BATCH_ID_METADATA_KEY] === gatewayBatchId);
        if (mine) return toJob(mine);
        if (!found.has_more || !found.data.length) return undefined;
        after = found.data[found.data.length - 1].id;
      }
      return undefined;
    },
    get: async (conn, id) => toJob(await apiRequest(conn, { answer: openAIBatchSchema, method: 'GET', path: batchPath(id) })),
    cancel: async (conn, id) => toJob(await apiRequest(conn, { answer: openAIBatchSchema, method: 'POST', path: batchPath(id, '/cancel'), idempotent: true })),
    output: (conn, job) => outputLines(conn, job),
    client: {
      // The caller's upload is already OpenAI's input: the batch is created on it as it is.
      nativeInput: true,
      limits: wire.limits,
      list: async (conn, page) =>
        toPage(await apiRequest(conn, { answer: openAIBatchListSchema, method: 'GET', path: '/batches', query: pageQuery(page) }), toJob),
      ownsHandle: (_conn, kind, handle) => HANDLES[kind].test(handle),
      readInput: async (conn, fileId) => (await apiDownload(conn, filePath(fileId, '/content'))).stream,
    },
  };
}

/** The provider's own ids, passed through (validated by their form: nothing else may reach a path). */
const HANDLES = { batch: /^batch_[A-Za-z0-9_-]{1,128}$/, input: /^file-[A-Za-z0-9_-]{1,128}$/ };

/** The output file's lines, then the error file's: OpenAI's `BatchRequestOutput` lines as they are. */
async function* outputLines(conn: OpenAICompatibleConnection, job: ProviderBatchJob): AsyncGenerator<BatchResultLine> {
  for (const id of [job.results.output, job.results.error]) {
    if (!id) continue;
    const content = await apiDownload(conn, filePath(id, '/content'));
    for await (const line of jsonLinesOf(content.stream, conn.title)) yield toResultLine(line, conn.title);
  }
}

/** A result line read through its schema: a line without `custom_id`, or a `response` without `status_code`, is a bad answer (502). */
function toResultLine(value: Record<string, unknown>, title: string): BatchResultLine {
  const line = parseAnswer(openAIBatchResultSchema, value, title, 'batch result line');
  const id = line.id ?? `batch_req_${line.custom_id}`;
  const { response, error } = line;
  return {
    id,
    custom_id: line.custom_id,
    response: response ? { status_code: response.status_code, request_id: response.request_id ?? id, body: response.body } : null,
    error: error ? { code: error.code ?? 'request_failed', message: error.message ?? `${title} could not run the request` } : null,
  };
}

/** Azure writes statuses capitalised ("Validating") in some answers: the same eight words otherwise. */
function statusOf(status: string): ProviderBatchStatus {
  const lower = status.toLowerCase();
  return (PROVIDER_BATCH_STATUSES as readonly string[]).includes(lower) ? (lower as ProviderBatchStatus) : 'in_progress';
}

function toJob(batch: OpenAIBatch): ProviderBatchJob {
  const counts = batch.request_counts;
  const first = batch.errors?.data?.[0];
  return {
    id: batch.id,
    status: statusOf(batch.status),
    requestCounts: counts ? { total: counts.total ?? 0, completed: counts.completed ?? 0, failed: counts.failed ?? 0 } : null,
    error: first ? { code: first.code ?? 'failed', message: first.message ?? 'The batch failed' } : null,
    results: { output: batch.output_file_id ?? null, error: batch.error_file_id ?? null },
    view: {
      createdAt: seconds(batch.created_at) ?? 0,
      times: Object.fromEntries(TIMES.flatMap((name) => (seconds(batch[name]) === null ? [] : [[name, seconds(batch[name])]]))),
      model: batch.model ?? null,
      inputFileId: batch.input_file_id ?? '',
      metadata: withoutGatewayId(batch.metadata),
      usage: batch.usage ? { inputTokens: batch.usage.input_tokens ?? 0, outputTokens: batch.usage.output_tokens ?? 0 } : null,
    },
  };
}

const TIMES: readonly BatchTimeName[] = [
  'in_progress_at',
  'expires_at',
  'finalizing_at',
  'completed_at',
  'failed_at',
  'expired_at',
  'cancelling_at',
  'cancelled_at',
];

/** Unix seconds from OpenAI's integer or Azure's ISO string; null when absent. */
function seconds(value: unknown): number | null {
  if (typeof value === 'number') return Math.floor(value);
  if (typeof value !== 'string') return null;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : Math.floor(ms / 1000);
}

/** The caller's metadata, without the key the provider runner adds to find its batches. */
function withoutGatewayId(metadata: Record<string, string> | null | undefined): Record<string, string> | null {
  if (!metadata) return null;
  const { [GATEWAY_BATCH_ID_METADATA_KEY]: _gateway, ...rest } = metadata;
  return rest;
}
