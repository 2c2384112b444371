/**
 * Batches in client mode (issue 25): OpenAI's Batch API over the provider's own batch service with
 * the caller's credentials (`x-gateway-provider`), nothing stored. Every answer comes from the
 * provider's job; ids wrap the provider's handles (src/providers/batch-ids.ts) and are checked
 * against the request's settings before any connection.
 *
 * Create reads the caller's uploaded OpenAI JSONL back from the provider's storage and checks it as
 * an upload is checked (one model, one url, unique custom_ids, every line a request, the provider's
 * limits), streamed; then, unless that file is already the provider's input (OpenAI, Azure), reads it
 * a second time translating each request into the provider's input (the module's `upload`), and
 * submits the job (`create`). Two reads rather than one so that a bad line is refused before anything
 * is written at the provider, with memory flat for a 200 MB file.
 */
import { createHash, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { LazyScope } from '../../auth/scope';
import { GatewayError, invalidField, unsupported } from '../../errors';
import { PROVIDER_HEADER, type RequestHeaders } from '../../http/provider-headers';
import type { BatchRequest, BatchResultLine, ProviderBatchCounts, ProviderBatchJob, ProviderBatchStatus } from '../../providers/batch';
import { batchId, batchIdKind } from '../../providers/batch-ids';
import type { ProviderClient } from '../../providers/registry';
import type { ProviderFile, ProviderPage } from '../../providers/types';
import { parseInput, parseQuery, type Input } from '../../validation/parse';
import { checkBatchStream, readBatchFile } from '../batches/batch-file';
import { CANCELLED, EXPIRED } from '../batches/batch-input';
import {
  BATCH_ENDPOINT,
  COMPLETION_WINDOW,
  clientCreateBatchSchema,
  clientListBatchesSchema,
  type ClientCreateBatchInput,
  type ClientListBatchesInput,
} from '../batches/batch.schemas';
import type { ClientModeService } from './client-mode.service';

/** A provider's job as client mode answers it: the job, its provider, and the counts to show. */
export interface ClientBatch {
  provider: ProviderClient;
  job: ProviderBatchJob;
  counts: ProviderBatchCounts;
}

/** Statuses after which the provider's results are all written: the output and error files exist. */
const ENDED: ReadonlySet<ProviderBatchStatus> = new Set(['completed', 'expired', 'cancelled']);
export const hasResults = (status: ProviderBatchStatus) => ENDED.has(status);

const NO_COUNTS: ProviderBatchCounts = { total: 0, completed: 0, failed: 0 };
const REQUESTS_PER_READ = 500;

/** A result line belongs in the output file when the provider answered the request with a success, else in the error file. */
const succeeded = (line: BatchResultLine) => line.error === null && line.response !== null && line.response.status_code < 400;

export class ClientBatchService {
  constructor(private readonly clientMode: Pick<ClientModeService, 'provider'>) {}

  async create(scope: LazyScope, headers: RequestHeaders, body: Input<ClientCreateBatchInput>): Promise<ClientBatch> {
    const data = parseInput(clientCreateBatchSchema, body);
    if (data.gatewayOptions !== undefined)
      throw invalidField('gatewayOptions', `is for hosted batches; in client mode send settings as headers (${PROVIDER_HEADER} names the provider)`);
    const provider = await this.clientMode.provider(scope, headers);
    const support = provider.clientBatches();
    const inputFile = provider.batchInputHandle(data.inputFileId, 'inputFileId');
    const { model, count, fields } = await checkBatchStream(await provider.readBatchInput(inputFile), support.limits ?? {}, 'inputFileId');
    const refusal = provider.batchRefusal({ model, hosted: false, client: true, count, fields });
    if (refusal !== null) throw unsupported(refusal, 'inputFileId');
    const gatewayBatchId = randomUUID();
    const input = support.nativeInput
      ? inputFile
      : await provider.uploadBatch({ gatewayBatchId, model, count, requests: () => requestsOf(provider, inputFile), sourceFileId: inputFile });
    const job = await provider.createBatch({ gatewayBatchId, model, input, count, metadata: data.metadata ?? null });
    return this.answer(provider, job);
  }

  async get(scope: LazyScope, headers: RequestHeaders, id: string): Promise<ClientBatch> {
    const provider = await this.clientMode.provider(scope, headers);
    const { handle } = provider.batchHandle(id, ['batch'], 'batchId');
    return this.answer(provider, await provider.getBatch(handle));
  }

  async cancel(scope: LazyScope, headers: RequestHeaders, id: string): Promise<ClientBatch> {
    const provider = await this.clientMode.provider(scope, headers);
    const { handle } = provider.batchHandle(id, ['batch'], 'batchId');
    return this.answer(provider, await provider.cancelBatch(handle));
  }

  /**
   * A page of the provider's batches. `after` is what `last_id` said: an id of ours (the SDK's
   * auto-paging sends the last batch's id) is opened to its handle, anything else is the provider's
   * page token and goes as it is.
   */
  async list(scope: LazyScope, headers: RequestHeaders, query: Input<ClientListBatchesInput> = {}): Promise<ProviderPage<ClientBatch>> {
    const { after, limit } = parseQuery(clientListBatchesSchema, query);
    const provider = await this.clientMode.provider(scope, headers);
    provider.clientBatches();
    const cursor = after !== undefined && batchIdKind(after) === 'batch' ? provider.batchHandle(after, ['batch'], 'after').handle : after;
    const page = await provider.listBatches({ after: cursor, limit });
    const data = (await provider.describeBatches(page.data)).map((job) => ({ provider, job, counts: job.requestCounts ?? NO_COUNTS }));
    const last = page.data.at(-1);
    // A cursor that is the last batch's handle is given as its id, so that OpenAI's `after` = last id works.
    const nextAfter = last && (page.nextAfter === null || page.nextAfter === last.id) ? batchId('batch', provider.name, last.id) : page.nextAfter;
    return { data, hasMore: page.hasMore, nextAfter };
  }

  /** Whether a file id is a batch's output or error file (its routes answer from the batch, not from the provider's files). */
  isResultFile = (id: string) => ['output', 'error'].includes(batchIdKind(id) ?? '');

  /**
   * The content of a batch's output or error file: every result the provider wrote (all its result
   * objects), as OpenAI's `BatchRequestOutput` lines, `custom_id` on each; successes in the output
   * file, failures in the error file.
   */
  async content(scope: LazyScope, headers: RequestHeaders, id: string): Promise<Readable> {
    const { provider, kind, handle } = await this.resultFile(scope, headers, id);
    const job = await this.ended(provider, handle);
    const lines = resultLines(provider, job, kind);
    return Readable.from(
      (async function* () {
        for await (const line of lines) yield Buffer.from(`${JSON.stringify(line)}\n`);
      })(),
    );
  }

  /** OpenAI's file object of a batch's output or error file (its size counted by reading it). */
  async file(scope: LazyScope, headers: RequestHeaders, id: string): Promise<ProviderFile> {
    const { provider, kind, handle } = await this.resultFile(scope, headers, id);
    const job = await this.ended(provider, handle);
    let bytes = 0;
    for await (const line of resultLines(provider, job, kind)) bytes += Buffer.byteLength(`${JSON.stringify(line)}\n`);
    const name = batchId('batch', provider.name, job.id);
    return {
      id,
      bytes,
      createdAt: viewOf(job).createdAt,
      filename: `${name}_${kind}.jsonl`,
      purpose: 'batch_output',
      status: 'processed',
      statusDetails: null,
    };
  }

  private async resultFile(scope: LazyScope, headers: RequestHeaders, id: string) {
    const provider = await this.clientMode.provider(scope, headers);
    const { kind, handle } = provider.batchHandle(id, ['output', 'error'], 'fileId');
    return { provider, kind: kind === 'output' ? ('output' as const) : ('error' as const), handle };
  }

  /** The provider's job; the counts of a provider that reports none (Together) read from its results once it has ended. */
  private async answer(provider: ProviderClient, found: ProviderBatchJob): Promise<ClientBatch> {
    const [job] = await provider.describeBatches([found]);
    viewOf(job);
    if (job.requestCounts) return { provider, job, counts: job.requestCounts };
    if (!hasResults(job.status)) return { provider, job, counts: NO_COUNTS };
    const counts = { total: 0, completed: 0, failed: 0 };
    for await (const line of allResults(provider, job)) {
      counts.total++;
      counts[succeeded(line) ? 'completed' : 'failed']++;
    }
    return { provider, job, counts };
  }

  /** The batch behind an output or error file id, once it has ended (before, its files do not exist: 404). */
  private async ended(provider: ProviderClient, handle: string): Promise<ProviderBatchJob> {
    const [job] = await provider.describeBatches([await provider.getBatch(handle)]);
    if (!hasResults(job.status))
      throw new GatewayError('not_found', `The batch is ${job.status}: its output and error files do not exist yet`, { code: 'not_found' });
    return job;
  }
}

/** What client mode shows of a job; a module whose client-mode job lacks it is a programming error. */
export function viewOf(job: ProviderBatchJob) {
  if (!job.view) throw new Error(`a client-mode batch job (${job.id}) came without its view`);
  return job.view;
}

/** The requests of the caller's (checked) input file, read again from the provider as `upload` iterates them. */
async function* requestsOf(provider: ProviderClient, inputFile: string): AsyncGenerator<BatchRequest> {
  for await (const chunk of readBatchFile(await provider.readBatchInput(inputFile), REQUESTS_PER_READ)) {
    for (const { customId, body } of chunk) yield { customId, body };
  }
}

/** The job's result lines of one file: successes (`output`) or failures (`error`). */
async function* resultLines(provider: ProviderClient, job: ProviderBatchJob, kind: 'output' | 'error'): AsyncGenerator<BatchResultLine> {
  for await (const line of allResults(provider, job)) if (succeeded(line) === (kind === 'output')) yield line;
}

/** Why a request of a batch that stopped early has no result. */
const UNRUN: Partial<Record<ProviderBatchStatus, { code: string; message: string }>> = { expired: EXPIRED, cancelled: CANCELLED };

/**
 * Every result the provider wrote (a line without custom_id is the provider's fault), then, for a
 * batch that expired or was cancelled, each request of the caller's file the provider left without
 * one, as OpenAI writes it (`batch_expired`, `batch_cancelled`): nothing is stored in client mode, so
 * the input is read again to know them. An input deleted since is a batch without those lines.
 */
async function* allResults(provider: ProviderClient, job: ProviderBatchJob): AsyncGenerator<BatchResultLine> {
  const seen = new Set<string>();
  for await (const line of provider.batchOutput(job)) {
    if (typeof line.custom_id !== 'string' || line.custom_id === '')
      throw new GatewayError('provider', `${provider.title} returned a batch result without a custom_id`, { status: 502 });
    seen.add(line.custom_id);
    yield line;
  }
  const error = UNRUN[job.status];
  if (!error) return;
  let input: Readable;
  try {
    input = await provider.readBatchInput(viewOf(job).inputFileId);
  } catch (err) {
    if (err instanceof GatewayError && err.status === 404) return;
    throw err;
  }
  for await (const chunk of readBatchFile(input, REQUESTS_PER_READ))
    for (const { customId } of chunk) if (!seen.has(customId)) yield { id: unrunLineId(job.id, customId), custom_id: customId, response: null, error };
}

/** Stable across reads: the same request of the same batch always has the same line id. */
const unrunLineId = (batch: string, customId: string) => `batch_req_${createHash('sha256').update(`${batch}\n${customId}`).digest('hex').slice(0, 24)}`;

/** Leaves out what is unset: OpenAI's document types optional Batch fields as numbers or strings, never null. */
const present = <K extends string, V>(key: K, value: V | null | undefined) => (value == null ? {} : ({ [key]: value } as Record<K, V>));

/**
 * OpenAI's Batch object from the provider's job: OpenAI's status words, times in seconds, the
 * counts, ids of ours (the output and error files once the job has ended), and `gateway` saying the
 * provider's batch service runs it in client mode.
 */
export function toClientBatchJson({ provider, job, counts }: ClientBatch) {
  const view = viewOf(job);
  const ended = hasResults(job.status);
  const usage = view.usage;
  return {
    id: batchId('batch', provider.name, job.id),
    object: 'batch' as const,
    endpoint: BATCH_ENDPOINT,
    ...present('model', view.model),
    ...present('errors', job.status === 'failed' && job.error ? { object: 'list', data: [{ ...job.error, param: null, line: null }] } : null),
    input_file_id: provider.batchInputId(view.inputFileId),
    completion_window: COMPLETION_WINDOW,
    status: job.status,
    ...present('output_file_id', ended ? batchId('output', provider.name, job.id) : null),
    ...present('error_file_id', ended ? batchId('error', provider.name, job.id) : null),
    created_at: view.createdAt,
    ...view.times,
    request_counts: counts,
    ...present(
      'usage',
      usage && {
        input_tokens: usage.inputTokens,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: usage.outputTokens,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: usage.inputTokens + usage.outputTokens,
      },
    ),
    metadata: view.metadata,
    gateway: { runner: 'provider' as const, provider: provider.name, mode: 'client' as const },
  };
}
