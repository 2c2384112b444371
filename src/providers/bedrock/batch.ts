/**
 * Amazon Bedrock batch inference (model invocation jobs) as the provider runner's batch service
 * (../batch.ts). Everything lives in the integration's bucket under `gateway-batches/{batch id}/`:
 *
 * - `input.jsonl`: one `{recordId, modelInput}` record per request, `modelInput` the request as
 *   Converse takes it (./chat-mappers.ts, images as base64), the job made with
 *   `modelInvocationType: Converse`. Record ids are `R` and the request's position: Bedrock's record
 *   id rules are not documented, so the caller's `custom_id` never goes there; `custom-ids.json`
 *   keeps them in order, and the output is joined back through it.
 * - `output/{jobId}/`: what Bedrock writes, one `<input>.out` per input file and
 *   `manifest.json.out` (the only place with counts). Every `.out` is read, not one guessed name.
 *
 * The job is `CreateModelInvocationJob` with the integration's role, `clientRequestToken` and
 * `jobName` derived from the gateway's batch id (a retried create is the same job; `find` looks it up
 * by name) and Bedrock's timeout at its floor of 24 hours, the batch's window. Bedrock runs foundation
 * models and inference profiles only (not custom or provisioned models), at least `MIN_RECORDS`
 * records a job, and no tools in Converse jobs: those batches are the gateway runner's.
 *
 * Client mode (./client-batch.ts) runs the same steps beside the caller's uploaded file instead:
 * `{file key}.batches/{uuid}/`, the job named `gateway-cbatch-{uuid}`, its handle the job ARN.
 */
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import {
  CreateModelInvocationJobCommand,
  GetModelInvocationJobCommand,
  ListModelInvocationJobsCommand,
  StopModelInvocationJobCommand,
  type GetModelInvocationJobResponse,
  type ModelInvocationJobStatus,
} from '@aws-sdk/client-bedrock';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import type { ConverseResponse } from '@aws-sdk/client-bedrock-runtime';
import { GatewayError, invalidField } from '../../errors';
import { statusTimes, unixSeconds } from '../batch-times';
import type {
  BatchCreateInput,
  BatchModelQuery,
  BatchRequest,
  BatchResultLine,
  BatchUploadInput,
  ProviderBatchJob,
  ProviderBatchStatus,
  ProviderBatchSupport,
} from '../batch';
import { failedLine, succeededLine, textLines } from '../batch-result';
import type { ChatBody } from '../chat-request';
import { answerOf, toConverse } from './chat-mappers';
import { finishOf, usageOf } from './chat';
import type { BedrockConnection } from './connection';
import { MIN_RECORDS } from './batch-limits';
import { bucketOf, objectOf } from './files';
import { s3Uri } from './s3-uri';
import { PART_SIZE } from './upload-file';

const PREFIX = 'gateway-batches/';
const CUSTOM_MODEL = /^arn:aws(?:-[a-z]+)*:bedrock:/;
/** Chat fields Converse batch jobs take no equivalent of: tools, and JSON mode (a forced tool elsewhere). */
const UNCARRIED = ['tools', 'response_format'] as const;

/** Bedrock's ten job statuses in OpenAI's words (docs/batches.md). */
const STATUS: Readonly<Record<ModelInvocationJobStatus, ProviderBatchStatus>> = {
  Submitted: 'validating',
  Validating: 'validating',
  Scheduled: 'in_progress',
  InProgress: 'in_progress',
  Completed: 'completed',
  // "Not all of your records could be processed in time": the window ran out, the rest is batch_expired.
  PartiallyCompleted: 'expired',
  Failed: 'failed',
  Stopping: 'cancelling',
  Stopped: 'cancelled',
  Expired: 'expired',
};
const ENDED = new Set<ProviderBatchStatus>(['completed', 'expired', 'cancelled', 'failed']);

/** Client mode's batch folder: beside the caller's file, `{its key}.batches/{uuid}/`. */
const CLIENT_FOLDER = /^(.+)\.batches\/[0-9a-f-]{36}\/$/;
/** Client-mode jobs are named so; the list asks for these names only. */
export const CLIENT_JOB_PREFIX = 'gateway-cbatch-';

/** The batch's folder: under the gateway's prefix, or in client mode beside the caller's input file. */
function folderOf(conn: BedrockConnection, input: BatchUploadInput): string {
  if (input.sourceFileId === undefined) return `${PREFIX}${input.gatewayBatchId}/`;
  return `${objectOf(conn, input.sourceFileId).key}.batches/${input.gatewayBatchId}/`;
}
/** Bedrock's job name and idempotency token: the gateway's batch id (a UUID) fits both patterns. */
const jobNameOf = (input: BatchCreateInput) => `${CLIENT_FOLDER.test(input.input) ? CLIENT_JOB_PREFIX : HOSTED_JOB_PREFIX}${input.gatewayBatchId}`;
const HOSTED_JOB_PREFIX = 'gateway-batch-';
const recordIdOf = (position: number) => `R${String(position).padStart(10, '0')}`;

function accepts(conn: BedrockConnection, query: BatchModelQuery): string | null {
  if (!conn.bucket) return 'Amazon Bedrock batch inference needs the integration’s S3 bucket (x-gateway-aws-s3-bucket)';
  if (!conn.roleArn) return 'Amazon Bedrock batch inference needs an IAM role it runs with (x-gateway-aws-role-arn)';
  if (CUSTOM_MODEL.test(query.model)) return `Amazon Bedrock batch inference does not run custom or provisioned models (${query.model})`;
  if (query.count < MIN_RECORDS) return `Amazon Bedrock runs batch jobs of at least ${MIN_RECORDS} requests; this batch has ${query.count}`;
  const carried = UNCARRIED.find((field) => query.fields.has(field));
  if (carried) return `Amazon Bedrock batch jobs (Converse) cannot carry ${carried}`;
  return null;
}

/** A request as a Converse record; tools (and JSON mode, a forced tool) are not taken by Converse batch jobs. */
function recordOf(request: BatchRequest, position: number): string {
  const body = request.body as unknown as ChatBody;
  for (const field of ['tools', 'response_format'] as const) {
    if (body[field] !== undefined && !(field === 'response_format' && body.response_format?.type === 'text')) {
      throw invalidField(
        ['body', field],
        'cannot be carried by an Amazon Bedrock batch job (Converse batch jobs take no tools): run it on the gateway runner',
        'unsupported_parameter',
      );
    }
  }
  const modelInput = toConverse(body).input;
  // Converse's JSON takes image bytes as base64.
  return JSON.stringify({ recordId: recordIdOf(position), modelInput }, (_key, value: unknown) =>
    value instanceof Uint8Array ? Buffer.from(value).toString('base64') : value,
  );
}

async function upload(conn: BedrockConnection, input: BatchUploadInput): Promise<string> {
  if (input.count < MIN_RECORDS) {
    throw new GatewayError('invalid_request', `Amazon Bedrock runs batch jobs of at least ${MIN_RECORDS} requests; this batch has ${input.count}`);
  }
  const bucket = bucketOf(conn);
  const folder = folderOf(conn, input);
  const customIds: string[] = [];
  async function* records() {
    for await (const request of input.requests()) {
      yield `${recordOf(request, customIds.length)}\n`;
      customIds.push(request.customId);
    }
  }
  const params = { Bucket: bucket, Key: `${folder}input.jsonl`, Body: Readable.from(records()), ContentType: 'application/jsonl' };
  await conn.call('Amazon S3', () => new Upload({ client: conn.s3(), params, partSize: PART_SIZE, queueSize: 2 }).done());
  const ids = { Bucket: bucket, Key: `${folder}custom-ids.json`, Body: JSON.stringify(customIds), ContentType: 'application/json' };
  await conn.call('Amazon S3', () => conn.s3().send(new PutObjectCommand(ids)));
  return folder;
}

async function create(conn: BedrockConnection, input: BatchCreateInput): Promise<ProviderBatchJob> {
  const bucket = bucketOf(conn);
  const command = new CreateModelInvocationJobCommand({
    jobName: jobNameOf(input),
    clientRequestToken: input.gatewayBatchId,
    roleArn: conn.roleArn,
    modelId: input.model,
    modelInvocationType: 'Converse',
    timeoutDurationInHours: 24,
    inputDataConfig: { s3InputDataConfig: { s3Uri: `s3://${bucket}/${input.input}input.jsonl`, s3InputFormat: 'JSONL' } },
    outputDataConfig: { s3OutputDataConfig: { s3Uri: `s3://${bucket}/${input.input}output/` } },
  });
  const { jobArn } = await conn.call('Amazon Bedrock', () => conn.control().send(command));
  return get(conn, jobArn ?? '');
}

/** The 12-character id at the end of a job ARN (the name of its output folder). */
const jobIdOf = (arn: string) => arn.slice(arn.lastIndexOf('/') + 1);

async function find(conn: BedrockConnection, gatewayBatchId: string): Promise<ProviderBatchJob | undefined> {
  const name = `${HOSTED_JOB_PREFIX}${gatewayBatchId}`;
  const page = await conn.call('Amazon Bedrock', () => conn.control().send(new ListModelInvocationJobsCommand({ nameContains: name, maxResults: 10 })));
  const summary = page.invocationJobSummaries?.find((s) => s.jobName === name);
  return summary?.jobArn ? get(conn, summary.jobArn) : undefined;
}

interface Manifest {
  totalRecordCount?: number;
  successRecordCount?: number;
  errorRecordCount?: number;
  inputTokenCount?: number;
  outputTokenCount?: number;
}

async function readObject(conn: BedrockConnection, bucket: string, key: string): Promise<AsyncIterable<Uint8Array>> {
  const object = await conn.call('Amazon S3', () => conn.s3().send(new GetObjectCommand({ Bucket: bucket, Key: key })));
  return object.Body as AsyncIterable<Uint8Array>;
}

export async function readJson<T>(conn: BedrockConnection, bucket: string, key: string): Promise<T> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of await readObject(conn, bucket, key)) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as T;
}

/** The job's manifest once it has ended (Bedrock reports no counts before). */
async function manifestOf(conn: BedrockConnection, bucket: string, outputFolder: string, status: ProviderBatchStatus): Promise<Manifest | null> {
  if (!ENDED.has(status) || status === 'failed') return null;
  try {
    return await readJson<Manifest>(conn, bucket, `${outputFolder}manifest.json.out`);
  } catch (err) {
    // A job stopped before it ran writes no manifest.
    if (err instanceof GatewayError && err.status === 404) return null;
    throw err;
  }
}

/** What a job's Get and its list summary both hold. */
export type JobFields = Pick<GetModelInvocationJobResponse, 'jobArn' | 'status' | 'message' | 'modelId' | 'inputDataConfig'> &
  Partial<Pick<GetModelInvocationJobResponse, 'submitTime' | 'lastModifiedTime' | 'endTime' | 'jobExpirationTime'>>;

/** A job by its ARN (the handle) or its id. */
async function get(conn: BedrockConnection, id: string): Promise<ProviderBatchJob> {
  return toJob(conn, await conn.call('Amazon Bedrock', () => conn.control().send(new GetModelInvocationJobCommand({ jobIdentifier: id }))));
}

/** A job in OpenAI's words; its counts and usage from the manifest once it has ended; times in seconds. */
export async function toJob(conn: BedrockConnection, job: JobFields): Promise<ProviderBatchJob> {
  const arn = job.jobArn ?? '';
  const status = STATUS[job.status ?? 'Submitted'] ?? 'validating';
  const bucket = bucketOf(conn);
  const input = job.inputDataConfig?.s3InputDataConfig?.s3Uri ?? '';
  const folder = input.slice(`s3://${bucket}/`.length, input.lastIndexOf('/') + 1);
  const outputFolder = `${folder}output/${jobIdOf(arn)}/`;
  const manifest = await manifestOf(conn, bucket, outputFolder, status);
  const inputFile = CLIENT_FOLDER.exec(folder)?.[1];
  return {
    id: arn,
    status,
    requestCounts: manifest && { total: manifest.totalRecordCount ?? 0, completed: manifest.successRecordCount ?? 0, failed: manifest.errorRecordCount ?? 0 },
    error: status === 'failed' ? { code: 'provider_failed', message: `Amazon Bedrock: ${job.message ?? 'the batch job failed'}` } : null,
    results: { folder, output: outputFolder, model: job.modelId ?? '' },
    view: {
      createdAt: unixSeconds(job.submitTime) ?? 0,
      // Bedrock reports no start time; a stop in progress is dated by the job's last change.
      times: statusTimes(status, {
        changed: unixSeconds(status === 'cancelling' ? job.lastModifiedTime : job.endTime),
        expires: unixSeconds(job.jobExpirationTime),
      }),
      model: job.modelId ?? null,
      inputFileId: inputFile === undefined ? '' : s3Uri({ bucket, key: inputFile }),
      metadata: null,
      usage: manifest && { inputTokens: manifest.inputTokenCount ?? 0, outputTokens: manifest.outputTokenCount ?? 0 },
    },
  };
}

async function cancel(conn: BedrockConnection, id: string): Promise<ProviderBatchJob> {
  const job = await get(conn, id);
  if (ENDED.has(job.status) || job.status === 'cancelling') return job;
  await conn.call('Amazon Bedrock', () => conn.control().send(new StopModelInvocationJobCommand({ jobIdentifier: id })));
  return get(conn, id);
}

interface OutputRecord {
  recordId?: string;
  modelOutput?: ConverseResponse;
  error?: { errorCode?: number; errorMessage?: string };
}

/** One output record as OpenAI's result line. */
function resultOf(record: OutputRecord, customId: string, model: string): BatchResultLine {
  const requestId = record.recordId ?? '';
  if (!record.modelOutput) {
    const status = record.error?.errorCode ?? 500;
    return failedLine(customId, requestId, status, `Amazon Bedrock: ${record.error?.errorMessage ?? 'the record failed'}`);
  }
  const output = record.modelOutput;
  const { content, toolCalls } = answerOf(output.output?.message?.content ?? [], undefined);
  const finishReason = output.stopReason ? finishOf(output.stopReason, false) : null;
  return succeededLine(customId, requestId, {
    id: `chatcmpl-${randomUUID()}`,
    model,
    created: Math.floor(Date.now() / 1000),
    choices: [{ index: 0, content: toolCalls.length && !content ? null : content, refusal: null, toolCalls, finishReason, logprobs: null }],
    usage: usageOf(output.usage),
  });
}

/** Every `.out` object of the job's output folder (but the manifest), in key order. */
async function outputKeys(conn: BedrockConnection, bucket: string, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await conn.call('Amazon S3', () => conn.s3().send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token })));
    keys.push(...(page.Contents ?? []).map((c) => c.Key ?? '').filter((k) => k.endsWith('.out') && !k.endsWith('/manifest.json.out')));
    token = page.NextContinuationToken;
  } while (token);
  return keys;
}

async function* output(conn: BedrockConnection, job: ProviderBatchJob): AsyncGenerator<BatchResultLine> {
  const bucket = bucketOf(conn);
  const folder = job.results.folder ?? '';
  const customIds = await readJson<string[]>(conn, bucket, `${folder}custom-ids.json`);
  const model = job.results.model ?? '';
  for (const key of await outputKeys(conn, bucket, job.results.output ?? '')) {
    for await (const line of textLines(await readObject(conn, bucket, key))) {
      const record = JSON.parse(line) as OutputRecord;
      const position = Number((record.recordId ?? '').slice(1));
      const customId = /^R\d{10}$/.test(record.recordId ?? '') ? customIds[position] : undefined;
      // A record the gateway did not write (its id unknown) has no request to answer.
      if (customId !== undefined) yield resultOf(record, customId, model);
    }
  }
}

export const bedrockBatch: ProviderBatchSupport<BedrockConnection> = { accepts, upload, create, find, get, cancel, output };
