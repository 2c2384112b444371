/**
 * A provider's own batch service (issue 23, the `provider` batch runner): what a provider module
 * declares as `batch` (module.ts) so that the gateway can hand a whole batch of OpenAI chat requests
 * to the provider and publish the provider's results as OpenAI's output and error files. The runner
 * (src/modules/batches/provider-batch.ts) drives these steps from the batch runner's leases; an
 * adapter only speaks its provider's wire format, never the database:
 *
 * 1. `accepts(conn, {model, hosted, count, fields})` — at create time, and only then: null when the
 *    service can run the model, that many requests and the body fields they set, else why not (the batch then runs on the gateway runner by default, and a caller who
 *    asked for `provider` gets a 400 with that reason). No network call: settings and model only.
 * 2. `upload(conn, input)` — translates every request (`custom_id` + OpenAI chat body, snake_case) to
 *    the provider's input line and uploads them (a file, an object, a dataset); returns the
 *    provider's reference, which the runner stores at once and never uploads again. Streamed:
 *    `lines` may hold 50 000 requests.
 * 3. `create(conn, input)` — submits the job once. The runner counts each attempt before it calls
 *    and, on every attempt after the first, calls `find(conn, gatewayBatchId)` first: so `create`
 *    must leave the gateway batch id where `find` sees it (OpenAI metadata, a Bedrock
 *    `clientRequestToken`, a deterministic job name). A crash between create and record then adopts
 *    the provider's job instead of creating a second. A provider with no way to find a job omits
 *    `find` (a retry may then create a second job; say so in its module).
 * 4. `get(conn, id)` — the job now: OpenAI's status (the provider's own words mapped, see
 *    docs/batches.md), the request counts where the provider reports them (null otherwise: the
 *    runner counts the output when it is read), and the job's error when it failed.
 * 5. `cancel(conn, id)` — asks the provider to stop; safe to repeat.
 * 6. `output(conn, job)` — once `get` says the job has ended (completed, expired, cancelled): every
 *    result the provider wrote (all its output objects and error files), each as OpenAI's
 *    `BatchRequestOutput` line: `custom_id`, and `response {status_code, request_id, body}` with a
 *    `chat.completion` body carrying `usage`, or `error {code, message}`. Requests the provider never
 *    finished may be left out: the runner fails them as `batch_cancelled` / `batch_expired`.
 *
 * Ids and references the adapter returns go back to it only (never into a URL without `urlPath`);
 * they are not shown to callers, who see the gateway's batch and file ids.
 */
/**
 * Client mode (issue 25, src/modules/client-mode/client-batches.ts) reuses these steps with the
 * caller's credentials and stores nothing: `create` there reads the caller's uploaded OpenAI JSONL
 * back from the provider (`client.readInput`), checks it, and runs `upload` + `create` (or `create`
 * alone where the file is already the provider's input); `get`, `cancel` and `client.list` answer
 * OpenAI's Batch object from the job alone, so a job then also says what `ProviderBatchJob.view`
 * holds; `output` serves `GET /v1/files/{id}/content` of the output and error file ids. Ids the caller
 * sees wrap the provider's handles (batch-ids.ts), and every handle coming back is checked with
 * `client.ownsHandle` before any connection.
 */
import type { Readable } from 'node:stream';
import type { PageInput, ProviderPage } from './types';

/** OpenAI's eight batch statuses: the only words a provider's state is reported in. */
export const PROVIDER_BATCH_STATUSES = ['validating', 'failed', 'in_progress', 'finalizing', 'completed', 'expired', 'cancelling', 'cancelled'] as const;
export type ProviderBatchStatus = (typeof PROVIDER_BATCH_STATUSES)[number];

/** One request of the batch as the input file has it. */
export interface BatchRequest {
  customId: string;
  /** OpenAI's chat request body as written (snake_case), `model` included. */
  body: Record<string, unknown>;
}

export interface BatchModelQuery {
  /** The model of the lines, as the provider knows it (a fine-tuned model's provider id). */
  model: string;
  /** A fine-tuned model of the workspace (hosted) rather than a model the caller names at an integration. */
  hosted: boolean;
  /** How many requests the batch holds. */
  count: number;
  /** Chat body fields any request sets (snake_case); `response_format` only when it asks for more than text. */
  fields: ReadonlySet<string>;
  /** Client mode: the model is the caller's lines' own, as the provider names it (an Azure deployment), never rewritten. */
  client?: boolean;
}

export interface BatchUploadInput {
  gatewayBatchId: string;
  /** The provider's model (as in BatchModelQuery). */
  model: string;
  /** Every request, in file order; iterate once. */
  requests: () => AsyncIterable<BatchRequest>;
  /** How many requests `requests` yields. */
  count: number;
}

export interface BatchCreateInput {
  gatewayBatchId: string;
  model: string;
  /** What `upload` returned. */
  input: string;
  count: number;
  /**
   * Client mode: the caller's metadata, sent instead of the gateway batch id (nothing is retried
   * there, so nothing needs finding). Absent in the provider runner.
   */
  metadata?: Record<string, string> | null;
}

export interface ProviderBatchCounts {
  total: number;
  completed: number;
  failed: number;
}

export interface ProviderBatchJob {
  /** The provider's handle (a batch id, an ARN, a resource name), passed back to get/cancel. */
  id: string;
  status: ProviderBatchStatus;
  /** Null where the provider reports no counts. */
  requestCounts: ProviderBatchCounts | null;
  /** Why the job failed (a job-level failure), else null. */
  error: { code: string; message: string } | null;
  /** Where the results are (output and error file ids, a storage prefix): for `output` only. */
  results: Readonly<Record<string, string | null>>;
  /** What client mode answers besides the above (the provider runner keeps its own): required there. */
  view?: ProviderBatchView;
}

/** OpenAI's Batch times that a provider reports, Unix **seconds** (never milliseconds). */
export type BatchTimeName = 'in_progress_at' | 'expires_at' | 'finalizing_at' | 'completed_at' | 'failed_at' | 'expired_at' | 'cancelling_at' | 'cancelled_at';

export interface ProviderBatchView {
  /** Unix seconds. */
  createdAt: number;
  /** The times the provider reports (seconds); unknown ones left out. */
  times: Partial<Record<BatchTimeName, number>>;
  /** The model of the requests, as the provider names it; null until it says. */
  model: string | null;
  /** The caller's input file as the upload answered its id (client mode checks and shows it). */
  inputFileId: string;
  /** The caller's metadata where the provider keeps it. */
  metadata: Record<string, string> | null;
  /** Token usage where the provider reports it. */
  usage: { inputTokens: number; outputTokens: number } | null;
}

/** What a handle names: a batch (job ARN, resource name, batch id) or an uploaded input file. */
export type BatchHandleKind = 'batch' | 'input';

/** A provider's limits on one batch input file, where they differ from OpenAI's (50 000 requests, 200 MB). */
export interface BatchInputLimits {
  maxRequests?: number;
  maxBytes?: number;
  /** Bedrock: a job needs at least 100 records. */
  minRequests?: number;
}

/** The client-mode part of a provider's batch service (see the file comment). */
export interface ClientBatchSupport<C> {
  /** The provider's batches, newest first; `page.after` is the previous page's `nextAfter` (its own token or a batch handle). */
  list(conn: C, page: PageInput): Promise<ProviderPage<ProviderBatchJob>>;
  /**
   * Whether a handle decoded from a caller's id (never trusted) is one these settings allow: its
   * pattern, and for storage handles the settings' own bucket, region or project. No network call.
   */
  ownsHandle(conn: C, kind: BatchHandleKind, handle: string): boolean;
  /** The caller's uploaded OpenAI JSONL (the id as its upload answered it), streamed back from the provider's storage. */
  readInput(conn: C, fileId: string): Promise<Readable>;
  /** The caller's file is already the provider's native input (OpenAI, Azure): `create` gets its id; `upload` is skipped. */
  nativeInput?: boolean;
  /**
   * Uploads with purpose `batch` answer ids of ours wrapping the provider's handle (`file-cbi1…`,
   * batch-ids.ts) rather than the handle itself: for providers whose file ids are storage URIs
   * (an `s3://` or `gs://` object), which callers must never see. The handle comes back to
   * `readInput` opened and checked with `ownsHandle(conn, 'input', …)`.
   */
  opaqueInputIds?: boolean;
  /** The purpose a `batch` upload is stored under at the provider (Together: `batch-api`); answers say `batch`. */
  inputPurpose?: string;
  limits?: BatchInputLimits;
}

/** One result line, OpenAI's `BatchRequestOutput`. */
export interface BatchResultLine {
  id: string;
  custom_id: string;
  response: { status_code: number; request_id: string; body: unknown } | null;
  error: { code: string; message: string } | null;
}

export interface ProviderBatchSupport<C> {
  accepts(conn: C, query: BatchModelQuery): string | null;
  upload(conn: C, input: BatchUploadInput): Promise<string>;
  create(conn: C, input: BatchCreateInput): Promise<ProviderBatchJob>;
  find?(conn: C, gatewayBatchId: string): Promise<ProviderBatchJob | undefined>;
  get(conn: C, id: string): Promise<ProviderBatchJob>;
  cancel(conn: C, id: string): Promise<ProviderBatchJob>;
  output(conn: C, job: ProviderBatchJob): AsyncIterable<BatchResultLine>;
  /** Client mode; a provider without it answers client-mode batches `unsupported_operation`. */
  client?: ClientBatchSupport<C>;
}
