/**
 * Bedrock batch inference (model invocation jobs) for the fake Bedrock control plane, in the wire
 * format of the Bedrock API model (bedrock-2023-04-20) and the user guide's "batch inference" pages:
 *
 * - `POST /model-invocation-job` (CreateModelInvocationJob, 200 `{jobArn}`, idempotent on
 *   `clientRequestToken`), `GET /model-invocation-job/{id or ARN}`, `GET /model-invocation-jobs`
 *   (paged by `nextToken`), `POST /model-invocation-job/{id}/stop`;
 * - input: every `.jsonl` object at the input S3 URI (an object, or a folder) of
 *   `{"recordId", "modelInput"}` lines; `modelInput` is a Converse request when
 *   `modelInvocationType` is `Converse`, else the model's native InvokeModel body (Anthropic Messages
 *   or Nova `messages-v1`, the two the fake runs);
 * - output under `{outputS3Uri}{jobId}/`: one `<input file name>.out` per input file, lines
 *   `{recordId, modelInput, modelOutput}` or `{recordId, modelInput, error: {errorCode, errorMessage}}`,
 *   and `manifest.json.out` with the record and token counts (the only place Bedrock reports them).
 *
 * A job advances one step per GET (or `advance`): Submitted → Validating → Scheduled → InProgress →
 * Completed. Validation reads the input as Bedrock does: a missing object, a line that is not a record,
 * or fewer records than the model's minimum (`minRecords`, 100 by default) makes the job Failed with a
 * `message`. InProgress runs `recordsPerStep` records per step, appending to the `.out` files, so a
 * stop (Stopping → Stopped) or a timeout (`timeOut`: Expired before it ran, PartiallyCompleted while it
 * runs) leaves partial output and a manifest. The record output order follows the input here; Bedrock
 * does not promise it.
 */
import { randomBytes } from 'node:crypto';
import { Constraints, conflict, jsonBody, listJobsPage, notFound, validationError, type AwsJsonRequest } from './aws-rest-json';
import { IDEMPOTENCY_TOKEN, nonEmptyLines, parseS3Uri } from './bedrock-customization';
import { converseAnswer, converseBody } from './bedrock-runtime';
import { fakeReply, type FakeAnswer } from './fake-model';
import type { FakeReply } from './kit';
import type { startFakeS3 } from './s3-server';

export const INVOCATION_JOB_STATUSES = [
  'Submitted',
  'Validating',
  'Scheduled',
  'InProgress',
  'Completed',
  'PartiallyCompleted',
  'Failed',
  'Stopping',
  'Stopped',
  'Expired',
] as const;
export type InvocationJobStatus = (typeof INVOCATION_JOB_STATUSES)[number];
const TERMINAL = new Set<InvocationJobStatus>(['Completed', 'PartiallyCompleted', 'Failed', 'Stopped', 'Expired']);

/** The user guide's minimum number of records per job (a Service Quotas value per model; 100 for the models gateways document). */
export const DEFAULT_MIN_RECORDS = 100;

const JOB_NAME = /^[a-zA-Z0-9]{1,63}(-*[a-zA-Z0-9+\-.]){0,63}$/;
const ROLE_ARN = /^arn:aws(-[^:]+)?:iam::([0-9]{12})?:role\/.+$/;
const S3_URI = /^s3:\/\/[a-z0-9][.\-a-z0-9]{1,61}[a-z0-9](\/.*)?$/;
/** Cross-region inference profile ids put a geography before the model id. */
const PROFILE_PREFIX = /^(us|eu|apac|global)\./;

interface InvocationRecord {
  recordId: string;
  modelInput: Record<string, unknown>;
  /** The `.out` object this record's result goes to. */
  outKey: string;
}

export interface FakeInvocationJob {
  jobArn: string;
  jobName: string;
  modelId: string;
  clientRequestToken?: string;
  roleArn: string;
  status: InvocationJobStatus;
  message?: string;
  submitTime: Date;
  lastModifiedTime: Date;
  endTime?: Date;
  inputDataConfig: { s3InputDataConfig: { s3Uri: string; s3InputFormat?: string; s3BucketOwner?: string } };
  outputDataConfig: { s3OutputDataConfig: { s3Uri: string; s3EncryptionKeyId?: string; s3BucketOwner?: string } };
  vpcConfig?: unknown;
  timeoutDurationInHours: number;
  jobExpirationTime: Date;
  modelInvocationType: 'InvokeModel' | 'Converse';
  /** The records read at validation, and how many have run (never sent back). */
  records: InvocationRecord[];
  processed: number;
  counts: { success: number; error: number; inputTokens: number; outputTokens: number };
}

export interface InvocationJobOptions {
  s3: Awaited<ReturnType<typeof startFakeS3>>;
  /** An ARN of this account and region for a resource path. */
  arn(resource: string): string;
  /** Foundation models that run batch inference. */
  foundationModels: string[];
  minRecords: number;
  /** Records an InProgress job runs per step (default: all). */
  recordsPerStep: number;
  stepsPerPoll: number;
}

const shortId = () => randomBytes(6).toString('hex');

/** One record's outcome: the model's output, or Bedrock's per-record error. */
type RecordResult = { modelOutput: Record<string, unknown>; answer: FakeAnswer } | { error: { errorCode: number; errorMessage: string } };

/** The Anthropic Messages answer of InvokeModel (content blocks, `stop_reason`, snake_case usage). */
function anthropicOutput(modelId: string, input: Record<string, any>): RecordResult {
  if (typeof input.anthropic_version !== 'string') return recordError('anthropic_version: Field required');
  if (typeof input.max_tokens !== 'number') return recordError('max_tokens: Field required');
  if (!Array.isArray(input.messages) || input.messages.length === 0) return recordError('messages: at least one message is required');
  const text = (content: unknown) =>
    typeof content === 'string' ? content : Array.isArray(content) ? content.map((b: { text?: string }) => b.text ?? '').join('') : '';
  const turns = [
    ...(input.system ? [{ role: 'system' as const, text: text(input.system) }] : []),
    ...input.messages.map((m: { role: 'user' | 'assistant'; content: unknown }) => ({ role: m.role, text: text(m.content) })),
  ];
  const full = fakeReply(modelId, { turns });
  const cut = full.completionTokens > input.max_tokens;
  const pieces = cut ? full.pieces.slice(0, input.max_tokens) : full.pieces;
  const answer = { ...full, pieces, text: pieces.join(''), completionTokens: cut ? input.max_tokens : full.completionTokens };
  const modelOutput = {
    id: `msg_bdrk_${shortId()}`,
    type: 'message',
    role: 'assistant',
    model: modelId,
    content: [{ type: 'text', text: answer.text }],
    stop_reason: cut ? 'max_tokens' : 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: answer.promptTokens, output_tokens: answer.completionTokens },
  };
  return { modelOutput, answer };
}

const recordError = (errorMessage: string): RecordResult => ({ error: { errorCode: 400, errorMessage } });

/** A Converse request's answer (Nova's native `messages-v1` body is Converse-shaped, with `max_new_tokens`). */
function converseOutput(modelId: string, input: Record<string, any>): RecordResult {
  try {
    const inferenceConfig = input.inferenceConfig?.max_new_tokens
      ? { ...input.inferenceConfig, maxTokens: input.inferenceConfig.max_new_tokens }
      : input.inferenceConfig;
    const { answer, stopReason } = converseAnswer(modelId, { ...input, inferenceConfig });
    return { modelOutput: converseBody(answer, stopReason, 1), answer };
  } catch (e) {
    return recordError((e as Error).message);
  }
}

function runRecord(job: FakeInvocationJob, record: InvocationRecord, refused: (modelInput: Record<string, unknown>) => boolean): RecordResult {
  if (refused(record.modelInput)) return recordError('The model refused this record (a failure the test asked for).');
  const model = job.modelId.replace(PROFILE_PREFIX, '');
  if (job.modelInvocationType === 'Converse') return converseOutput(model, record.modelInput);
  if (model.startsWith('anthropic.')) return anthropicOutput(model, record.modelInput);
  if (model.startsWith('amazon.nova')) {
    return record.modelInput.schemaVersion === 'messages-v1' ? converseOutput(model, record.modelInput) : recordError('schemaVersion: expected messages-v1');
  }
  return recordError(`This fake runs InvokeModel bodies of Anthropic and Nova models only, not ${model}.`);
}

/** The keys of the `.jsonl` objects an input URI names: the object itself, or every one under the folder. */
function inputKeys(s3: InvocationJobOptions['s3'], uri: string): { bucket: string; keys: string[] } {
  const { bucket, key } = parseS3Uri(uri);
  const objects = s3.state.buckets.get(bucket);
  if (objects?.has(key)) return { bucket, keys: [key] };
  const prefix = key === '' || key.endsWith('/') ? key : `${key}/`;
  return { bucket, keys: [...(objects?.keys() ?? [])].filter((k) => k.startsWith(prefix) && k.endsWith('.jsonl')).sort() };
}

export function createInvocationJobs(opts: InvocationJobOptions) {
  const jobs = new Map<string, FakeInvocationJob>();
  const { s3 } = opts;
  let refused: (modelInput: Record<string, unknown>) => boolean = () => false;
  const jobIdOf = (job: FakeInvocationJob) => job.jobArn.slice(job.jobArn.lastIndexOf('/') + 1);

  function find(identifier: string): FakeInvocationJob {
    const job = jobs.get(identifier) ?? [...jobs.values()].find((j) => jobIdOf(j) === identifier);
    if (!job) throw notFound(`Could not find the model invocation job ${identifier}.`);
    return job;
  }

  function checkModel(modelId: string): void {
    if (modelId.startsWith('arn:')) throw validationError(`Batch inference isn't supported for provisioned or custom models: ${modelId}.`);
    if (!opts.foundationModels.includes(modelId.replace(PROFILE_PREFIX, ''))) throw validationError(`The provided model identifier is invalid: ${modelId}.`);
  }

  function checkCreate(body: Record<string, any>): void {
    const c = new Constraints();
    c.string('jobName', body.jobName, { required: true, min: 1, max: 63, pattern: JOB_NAME });
    c.string('roleArn', body.roleArn, { required: true, min: 0, max: 2048, pattern: ROLE_ARN });
    c.string('clientRequestToken', body.clientRequestToken, { min: 1, max: 256, pattern: IDEMPOTENCY_TOKEN });
    c.string('modelId', body.modelId, { required: true, min: 1, max: 2048 });
    c.integer('timeoutDurationInHours', body.timeoutDurationInHours, { min: 24, max: 168 });
    c.string('modelInvocationType', body.modelInvocationType, { enum: ['InvokeModel', 'Converse'] });
    if (
      c.object('inputDataConfig', body.inputDataConfig, true) &&
      c.object('inputDataConfig.s3InputDataConfig', body.inputDataConfig.s3InputDataConfig, true)
    ) {
      const input = body.inputDataConfig.s3InputDataConfig;
      c.string('inputDataConfig.s3InputDataConfig.s3Uri', input.s3Uri, { required: true, min: 1, max: 1024, pattern: S3_URI });
      c.string('inputDataConfig.s3InputDataConfig.s3InputFormat', input.s3InputFormat, { enum: ['JSONL'] });
    }
    if (
      c.object('outputDataConfig', body.outputDataConfig, true) &&
      c.object('outputDataConfig.s3OutputDataConfig', body.outputDataConfig.s3OutputDataConfig, true)
    ) {
      const output = body.outputDataConfig.s3OutputDataConfig.s3Uri;
      c.string('outputDataConfig.s3OutputDataConfig.s3Uri', output, { required: true, min: 1, max: 1024, pattern: S3_URI });
    }
    c.check();
    checkModel(body.modelId);
    if (!s3.state.buckets.has(parseS3Uri(body.outputDataConfig.s3OutputDataConfig.s3Uri).bucket)) {
      throw validationError('Unable to access the output S3 location. Check that the bucket exists and that the role can write to it.');
    }
  }

  function create(body: Record<string, any>): FakeReply {
    checkCreate(body);
    const token = body.clientRequestToken as string | undefined;
    const replay = token ? [...jobs.values()].find((j) => j.clientRequestToken === token) : undefined;
    if (replay) return { status: 200, body: { jobArn: replay.jobArn } };
    if ([...jobs.values()].some((j) => j.jobName === body.jobName))
      throw conflict(`A model invocation job with the name ${String(body.jobName)} already exists.`);
    const now = new Date();
    const hours = (body.timeoutDurationInHours as number | undefined) ?? 168;
    const job: FakeInvocationJob = {
      jobArn: opts.arn(`model-invocation-job/${shortId()}`),
      jobName: body.jobName,
      modelId: body.modelId,
      clientRequestToken: token,
      roleArn: body.roleArn,
      status: 'Submitted',
      submitTime: now,
      lastModifiedTime: now,
      inputDataConfig: { s3InputDataConfig: { s3InputFormat: 'JSONL', ...body.inputDataConfig.s3InputDataConfig } },
      outputDataConfig: body.outputDataConfig,
      vpcConfig: body.vpcConfig,
      timeoutDurationInHours: hours,
      jobExpirationTime: new Date(now.getTime() + hours * 3600_000),
      modelInvocationType: body.modelInvocationType ?? 'InvokeModel',
      records: [],
      processed: 0,
      counts: { success: 0, error: 0, inputTokens: 0, outputTokens: 0 },
    };
    jobs.set(job.jobArn, job);
    return { status: 200, body: { jobArn: job.jobArn } };
  }

  const outputFolder = (job: FakeInvocationJob) => {
    const { bucket, key } = parseS3Uri(job.outputDataConfig.s3OutputDataConfig.s3Uri);
    return { bucket, folder: `${key === '' || key.endsWith('/') ? key : `${key}/`}${jobIdOf(job)}/` };
  };

  /** Reads and checks the input; the reason the job fails validation, or undefined. */
  function validate(job: FakeInvocationJob): string | undefined {
    const uri = job.inputDataConfig.s3InputDataConfig.s3Uri;
    const { bucket, keys } = inputKeys(s3, uri);
    if (keys.length === 0) return `Unable to read the input data at ${uri}: no JSONL object found. Check that it exists and that the role can read it.`;
    const { folder } = outputFolder(job);
    for (const key of keys) {
      for (const [i, line] of nonEmptyLines(s3.getObject(bucket, key)!).entries()) {
        let record: Record<string, unknown> | undefined;
        try {
          record = JSON.parse(line) as Record<string, unknown>;
        } catch {
          // answered below
        }
        const input = record?.modelInput;
        if (!record || typeof record !== 'object' || !input || typeof input !== 'object' || Array.isArray(input)) {
          return `Input validation failed: line ${i + 1} of s3://${bucket}/${key} is not a JSON record with a modelInput object.`;
        }
        const recordId = typeof record.recordId === 'string' ? record.recordId : `${shortId().slice(0, 11).toUpperCase()}`;
        job.records.push({ recordId, modelInput: input as Record<string, unknown>, outKey: `${folder}${key.slice(key.lastIndexOf('/') + 1)}.out` });
      }
    }
    if (job.records.length < opts.minRecords) {
      return `The number of records in the input (${job.records.length}) is less than the minimum number of records per batch inference job for ${job.modelId} (${opts.minRecords}).`;
    }
    return undefined;
  }

  /** Runs the next records, appending each result to its `.out` object. */
  function runRecords(job: FakeInvocationJob, count: number) {
    const { bucket } = outputFolder(job);
    for (const record of job.records.slice(job.processed, job.processed + count)) {
      const result = runRecord(job, record, refused);
      if ('answer' in result) {
        job.counts.success++;
        job.counts.inputTokens += result.answer.promptTokens;
        job.counts.outputTokens += result.answer.completionTokens;
      } else job.counts.error++;
      const line = 'answer' in result ? { modelOutput: result.modelOutput } : { error: result.error };
      const before = s3.getObject(bucket, record.outKey) ?? Buffer.alloc(0);
      const text = JSON.stringify({ recordId: record.recordId, modelInput: record.modelInput, ...line }) + '\n';
      s3.putObject(bucket, record.outKey, Buffer.concat([before, Buffer.from(text)]), 'application/octet-stream');
      job.processed++;
    }
  }

  /** Ends a job; a job that read its input leaves the manifest of what it ran. */
  function finish(job: FakeInvocationJob, status: InvocationJobStatus, message?: string) {
    const now = new Date();
    Object.assign(job, { status, lastModifiedTime: now, endTime: now }, message ? { message } : {});
    if (job.records.length === 0) return;
    const { bucket, folder } = outputFolder(job);
    const manifest = {
      totalRecordCount: job.records.length,
      processedRecordCount: job.processed,
      successRecordCount: job.counts.success,
      errorRecordCount: job.counts.error,
      inputTokenCount: job.counts.inputTokens,
      outputTokenCount: job.counts.outputTokens,
    };
    s3.putObject(bucket, `${folder}manifest.json.out`, JSON.stringify(manifest), 'application/octet-stream');
  }

  const NEXT: Partial<Record<InvocationJobStatus, InvocationJobStatus>> = { Submitted: 'Validating', Scheduled: 'InProgress' };

  function step(job: FakeInvocationJob): void {
    if (TERMINAL.has(job.status)) return;
    job.lastModifiedTime = new Date();
    if (job.status === 'Stopping') return finish(job, 'Stopped');
    if (job.status === 'Validating') {
      const problem = validate(job);
      if (problem) {
        job.records = [];
        return finish(job, 'Failed', problem);
      }
      job.status = 'Scheduled';
      return;
    }
    if (job.status === 'InProgress') {
      runRecords(job, opts.recordsPerStep);
      if (job.processed === job.records.length) finish(job, 'Completed');
      return;
    }
    job.status = NEXT[job.status]!;
  }

  const response = ({ records: _r, processed: _p, counts: _c, ...job }: FakeInvocationJob) => job;

  function list(query: URLSearchParams): FakeReply {
    const view = (j: FakeInvocationJob) => ({ name: j.jobName, status: j.status, time: j.submitTime });
    const rules = { statuses: INVOCATION_JOB_STATUSES, timeParam: 'submitTime', namePattern: JOB_NAME };
    const { page, nextToken } = listJobsPage([...jobs.values()], view, query, rules);
    return { status: 200, body: { invocationJobSummaries: page.map(response), nextToken } };
  }

  function stop(job: FakeInvocationJob): FakeReply {
    if (TERMINAL.has(job.status) || job.status === 'Stopping') {
      throw validationError(`The model invocation job ${job.jobName} is ${job.status} and cannot be stopped.`);
    }
    job.status = 'Stopping';
    job.lastModifiedTime = new Date();
    return { status: 200, body: {} };
  }

  type Handler = (id: string, request: AwsJsonRequest) => FakeReply;
  const routes: Array<[string, RegExp, Handler]> = [
    ['POST', /^\/model-invocation-job$/, (_, r) => create(jsonBody(r.body))],
    ['GET', /^\/model-invocation-jobs$/, (_, r) => list(r.query)],
    [
      'GET',
      /^\/model-invocation-job\/([^/]+)$/,
      (id) => {
        const job = find(id);
        for (let i = 0; i < opts.stepsPerPoll; i++) step(job);
        return { status: 200, body: response(job) };
      },
    ],
    ['POST', /^\/model-invocation-job\/([^/]+)\/stop$/, (id) => stop(find(id))],
  ];

  return {
    jobs,
    routes,
    /** Records whose model input `predicate` picks fail with Bedrock's per-record 400 from now on. */
    refuseRecords(predicate: (modelInput: Record<string, unknown>) => boolean) {
      refused = predicate;
    },
    /** Advances a job (by ARN or id) `steps` lifecycle steps without a GET; returns it. */
    advance(identifier: string, steps = 1): FakeInvocationJob {
      const job = find(identifier);
      for (let i = 0; i < steps; i++) step(job);
      return job;
    },
    /** The job's timeout passes: Expired if it has not started running, PartiallyCompleted (with what ran) if it has. */
    timeOut(identifier: string): FakeInvocationJob {
      const job = find(identifier);
      if (TERMINAL.has(job.status)) return job;
      if (job.status === 'InProgress' || job.status === 'Stopping') finish(job, 'PartiallyCompleted', 'Not all of your records could be processed in time.');
      else finish(job, 'Expired', 'The job was scheduled but did not begin before the timeout duration.');
      return job;
    },
  };
}
