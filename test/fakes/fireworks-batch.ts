/**
 * Fireworks batch inference (`batchInferenceJobs`) for the fake Fireworks control plane, in the REST
 * shape of Fireworks' API reference and SDK types (BatchInferenceJob, jobProgress, JobState):
 *
 * - `POST /v1/accounts/{a}/batchInferenceJobs[?batchInferenceJobId=]` `{displayName, model,
 *   inputDatasetId, outputDatasetId, inferenceParameters, precision, continuedFromJobName}`; a second
 *   create with the same id is ALREADY_EXISTS (the caller adopts the job by GET);
 * - `GET …/batchInferenceJobs` (pageSize, pageToken, orderBy), `GET …/{id}`, `DELETE …/{id}`; as in
 *   the SDK there is no cancel (`:cancel` is NOT_FOUND);
 * - input: a READY dataset of `{"custom_id", "body": {messages, max_tokens, …}}` lines, no `model` in
 *   the body (the job's model answers); output: the output dataset (created by the job) with
 *   `results.jsonl` (`{"custom_id", "response": chat.completion}`) and `errors.jsonl`
 *   (`{"custom_id", "error": {"code", "message"}}`), downloaded through `:getDownloadEndpoint`. The
 *   output file names and line shapes are the fake's reading of Fireworks' docs (unverified there).
 *
 * A job advances one step per GET: VALIDATING → PENDING → RUNNING (`rowsPerStep` rows a step,
 * `jobProgress` counting them) → COMPLETED, the output dataset READY. `expire` (EXPIRED, "any
 * completed requests are saved") and `fail` (FAILED) end it early with the rows already written.
 */
import { parseChatRequest, chatCompletion } from './chat';
import { fakeReply } from './fake-model';
import { isoNow, type FakeHttpError } from './kit';
import type { MessageSchema } from './protojson';

export type BatchJobState =
  'JOB_STATE_VALIDATING' | 'JOB_STATE_PENDING' | 'JOB_STATE_RUNNING' | 'JOB_STATE_COMPLETED' | 'JOB_STATE_FAILED' | 'JOB_STATE_EXPIRED' | 'JOB_STATE_DELETING';
const TERMINAL: BatchJobState[] = ['JOB_STATE_COMPLETED', 'JOB_STATE_FAILED', 'JOB_STATE_EXPIRED'];

export interface BatchJobProgress {
  percent: number;
  totalInputRequests: number;
  totalProcessedRequests: number;
  successfullyProcessedRequests: number;
  failedRequests: number;
  outputRows: number;
  inputTokens: number;
  outputTokens: number;
  cachedInputTokenCount: number;
}

export interface FireworksBatchJob {
  name: string;
  displayName: string;
  createTime: string;
  updateTime: string;
  createdBy: string;
  state: BatchJobState;
  status: { code: string; message: string };
  model: string;
  inputDatasetId: string;
  outputDatasetId: string;
  inferenceParameters: Record<string, unknown> | null;
  precision: string;
  jobProgress: BatchJobProgress;
  continuedFromJobName: string;
}

/** The fields Fireworks fills in on every resource: a request may carry them, and they are ignored. */
export const RESOURCE_OUTPUTS: MessageSchema = {
  name: 'output',
  state: 'output',
  status: 'output',
  createTime: 'output',
  updateTime: 'output',
  createdBy: 'output',
};

export const BATCH_JOB_SCHEMA: MessageSchema = {
  displayName: 'string',
  model: 'string',
  inputDatasetId: 'string',
  outputDatasetId: 'string',
  inferenceParameters: { message: { maxTokens: 'int32', temperature: 'double', topP: 'double', topK: 'int32', n: 'int32', extraBody: 'string' } },
  precision: {
    enum: [
      'PRECISION_UNSPECIFIED',
      'FP16',
      'FP8',
      'FP8_MM',
      'FP8_AR',
      'FP8_MM_KV_ATTN',
      'FP8_KV',
      'FP8_MM_V2',
      'FP8_V2',
      'FP8_MM_KV_ATTN_V2',
      'NF4',
      'FP4',
      'BF16',
    ],
  },
  continuedFromJobName: 'string',
  ...RESOURCE_OUTPUTS,
  jobProgress: 'output',
};

export interface BatchRow {
  customId: string;
  body: Record<string, unknown>;
}

export interface BatchJobDeps {
  account: string;
  /** RESOURCE_ID of the control plane. */
  resourceId: RegExp;
  controlError(code: 'INVALID_ARGUMENT' | 'NOT_FOUND' | 'ALREADY_EXISTS' | 'FAILED_PRECONDITION', message: string): FakeHttpError;
  /** The id in `accounts/{account}/{collection}/{id}`, or undefined. */
  idIn(name: string, collection: string): string | undefined;
  /** A READY batch-request dataset's lines (throws when it is missing, not ready or not of that shape). */
  batchRows(datasetName: string): BatchRow[];
  /** Creates the job's output dataset (ALREADY_EXISTS when taken) and writes its files as they fill. */
  createOutputDataset(id: string, displayName: string): void;
  writeOutput(id: string, files: Record<string, Buffer>, done: boolean, rows: number): void;
  servable(model: string): boolean;
  rowsPerStep: () => number;
}

/** Why a line is not a batch request (`{custom_id, body}` with messages and no model), or undefined. */
function rowProblem(line: unknown): string | undefined {
  if (!line || typeof line !== 'object' || Array.isArray(line)) return 'each line must be a JSON object';
  const { custom_id: customId, body } = line as Record<string, unknown>;
  if (typeof customId !== 'string' || !customId) return '"custom_id" must be a non-empty string';
  if (!body || typeof body !== 'object' || Array.isArray(body)) return '"body" must be an object';
  if (!Array.isArray((body as Record<string, unknown>).messages)) return '"body.messages" must be an array';
  if ((body as Record<string, unknown>).model !== undefined) return '"body.model" is not allowed: the job names the model';
  return undefined;
}

/**
 * The rows of a batch-request dataset, or undefined when its first line is not one (another kind of
 * dataset); a later bad line or a repeated `custom_id` is an error naming the line.
 */
export function parseBatchRows(content: Buffer): { rows: BatchRow[]; openai?: true } | { error: string } | undefined {
  const lines = content
    .toString('utf8')
    .split('\n')
    .map((text, i) => ({ text, number: i + 1 }))
    .filter(({ text }) => text.trim());
  const parse = (text: string): unknown => {
    try {
      return JSON.parse(text);
    } catch {
      return undefined;
    }
  };
  const first = lines.length ? (parse(lines[0].text) as Record<string, unknown> | undefined) : undefined;
  if (!first || typeof first !== 'object' || !('custom_id' in first)) return undefined;
  // OpenAI's batch lines (with method and url): a dataset kept as uploaded, not batch inference input.
  if ('url' in first) return { rows: [], openai: true };
  const seen = new Set<string>();
  const rows: BatchRow[] = [];
  for (const { text, number } of lines) {
    const line = parse(text);
    const problem = rowProblem(line);
    if (problem) return { error: `line ${number}: ${problem}` };
    const row = line as { custom_id: string; body: Record<string, unknown> };
    if (seen.has(row.custom_id)) return { error: `line ${number}: duplicate custom_id "${row.custom_id}"` };
    seen.add(row.custom_id);
    rows.push({ customId: row.custom_id, body: row.body });
  }
  return { rows };
}

const emptyProgress = (total: number): BatchJobProgress => ({
  percent: 0,
  totalInputRequests: total,
  totalProcessedRequests: 0,
  successfullyProcessedRequests: 0,
  failedRequests: 0,
  outputRows: 0,
  inputTokens: 0,
  outputTokens: 0,
  cachedInputTokenCount: 0,
});

export function createBatchInferenceJobs(deps: BatchJobDeps) {
  const jobs = new Map<string, FireworksBatchJob>();
  const plans = new Map<string, { rows: BatchRow[]; results: string[]; errors: string[]; failure?: string }>();
  const jobName = (id: string) => `accounts/${deps.account}/batchInferenceJobs/${id}`;
  let refused: (customId: string) => boolean = () => false;
  const { controlError } = deps;

  function create(body: Record<string, unknown>, query: URLSearchParams): FireworksBatchJob {
    const id = query.get('batchInferenceJobId') || `bij-${Math.random().toString(36).slice(2, 10)}`;
    if (!deps.resourceId.test(id)) throw controlError('INVALID_ARGUMENT', `invalid batch inference job id "${id}"`);
    if (jobs.has(id)) throw controlError('ALREADY_EXISTS', 'batch inference job ID already exists');
    const model = typeof body.model === 'string' ? body.model : '';
    if (!model) throw controlError('INVALID_ARGUMENT', 'model is required');
    if (!deps.servable(model)) throw controlError('NOT_FOUND', `Model "${model}" not found or not deployed`);
    if (typeof body.inputDatasetId !== 'string' || !body.inputDatasetId) throw controlError('INVALID_ARGUMENT', 'input_dataset_id is required');
    const rows = deps.batchRows(body.inputDatasetId);
    const output = (body.outputDatasetId as string | undefined) || `accounts/${deps.account}/datasets/${id}-output`;
    const outputId = deps.idIn(output, 'datasets');
    if (!outputId) throw controlError('INVALID_ARGUMENT', `invalid output dataset "${output}"`);
    deps.createOutputDataset(outputId, `${(body.displayName as string | undefined) ?? id} output`);
    const now = isoNow();
    const job: FireworksBatchJob = {
      name: jobName(id),
      displayName: (body.displayName as string | undefined) ?? '',
      createTime: now,
      updateTime: now,
      createdBy: 'fake-user@example.com',
      state: 'JOB_STATE_VALIDATING',
      status: { code: 'OK', message: '' },
      model,
      inputDatasetId: body.inputDatasetId,
      outputDatasetId: output,
      inferenceParameters: (body.inferenceParameters as Record<string, unknown> | undefined) ?? null,
      precision: (body.precision as string | undefined) ?? 'PRECISION_UNSPECIFIED',
      jobProgress: emptyProgress(rows.length),
      continuedFromJobName: (body.continuedFromJobName as string | undefined) ?? '',
    };
    jobs.set(id, job);
    plans.set(id, { rows, results: [], errors: [] });
    return job;
  }

  function find(id: string): FireworksBatchJob {
    const job = jobs.get(id);
    if (!job) throw controlError('NOT_FOUND', `BatchInferenceJob "${jobName(id)}" not found`);
    return job;
  }

  /** One row: the body under the job's model and its inference parameters, answered or refused as chat is. */
  function runRow(job: FireworksBatchJob, row: BatchRow, plan: { results: string[]; errors: string[] }) {
    const params = job.inferenceParameters ?? {};
    const body = { max_tokens: params.maxTokens, temperature: params.temperature, ...row.body, model: job.model };
    const progress = job.jobProgress;
    progress.totalProcessedRequests++;
    try {
      if (refused(row.customId)) throw new Error('The model refused this request (a failure the test asked for).');
      const request = parseChatRequest(body, (message) => new Error(message));
      const answer = fakeReply(job.model, request.conversation);
      plan.results.push(JSON.stringify({ custom_id: row.customId, response: chatCompletion(job.model, answer, request.shape) }));
      progress.successfullyProcessedRequests++;
      progress.outputRows++;
      progress.inputTokens += answer.promptTokens;
      progress.outputTokens += answer.completionTokens;
    } catch (e) {
      plan.errors.push(JSON.stringify({ custom_id: row.customId, error: { code: 400, message: (e as Error).message } }));
      progress.failedRequests++;
    }
  }

  function writeOutput(job: FireworksBatchJob, done: boolean) {
    const plan = plans.get(idOf(job))!;
    const file = (lines: string[]) => Buffer.from(lines.map((l) => `${l}\n`).join(''));
    const files = { 'results.jsonl': file(plan.results), 'errors.jsonl': file(plan.errors) };
    deps.writeOutput(deps.idIn(job.outputDatasetId, 'datasets')!, files, done, plan.results.length + plan.errors.length);
  }

  const idOf = (job: FireworksBatchJob) => job.name.slice(job.name.lastIndexOf('/') + 1);

  function finish(job: FireworksBatchJob, state: BatchJobState, status = { code: 'OK', message: '' }) {
    Object.assign(job, { state, status, updateTime: isoNow() });
    writeOutput(job, true);
  }

  function step(job: FireworksBatchJob) {
    const plan = plans.get(idOf(job))!;
    if (TERMINAL.includes(job.state) || job.state === 'JOB_STATE_DELETING') return;
    if (plan.failure) return finish(job, 'JOB_STATE_FAILED', { code: 'INTERNAL', message: plan.failure });
    job.updateTime = isoNow();
    if (job.state === 'JOB_STATE_VALIDATING') job.state = 'JOB_STATE_PENDING';
    else if (job.state === 'JOB_STATE_PENDING') job.state = 'JOB_STATE_RUNNING';
    else {
      const progress = job.jobProgress;
      const start = progress.totalProcessedRequests;
      for (const row of plan.rows.slice(start, start + deps.rowsPerStep())) runRow(job, row, plan);
      progress.percent = plan.rows.length ? Math.round((100 * progress.totalProcessedRequests) / plan.rows.length) : 100;
      if (progress.totalProcessedRequests === plan.rows.length) finish(job, 'JOB_STATE_COMPLETED');
      else writeOutput(job, false);
    }
  }

  /** The GET of a job: advance, answer; a job being deleted is shown once more, then gone. */
  function poll(id: string): FireworksBatchJob {
    const job = find(id);
    if (job.state === 'JOB_STATE_DELETING') jobs.delete(id);
    else step(job);
    return job;
  }

  return {
    jobs,
    create,
    poll,
    remove(id: string) {
      Object.assign(find(id), { state: 'JOB_STATE_DELETING', updateTime: isoNow() });
      return {};
    },
    /** Rows whose custom_id `predicate` picks fail (code 400) from now on. */
    refuseRows(predicate: (customId: string) => boolean) {
      refused = predicate;
    },
    /** The job ends FAILED (status INTERNAL, `message`) at its next GET, keeping the rows already written. */
    fail(id: string, message = 'batch inference failed: internal error') {
      find(id);
      plans.get(id)!.failure = message;
    },
    /** The job runs past its 24-hour window now: EXPIRED, the completed rows saved. */
    expire(id: string): FireworksBatchJob {
      const job = find(id);
      if (!TERMINAL.includes(job.state))
        finish(job, 'JOB_STATE_EXPIRED', { code: 'DEADLINE_EXCEEDED', message: 'the batch job exceeded the 24-hour time limit' });
      return job;
    },
  };
}
