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
}

/** The operation names the batch steps are reported under (metrics, traces, required settings). */
export type BatchOperationName = 'batchUpload' | 'batchCreate' | 'batchFind' | 'batchGet' | 'batchCancel' | 'batchOutput';
