/**
 * Bedrock batches in client mode (../batch.ts `ClientBatchSupport`). The caller's OpenAI JSONL is an
 * object its upload put under `gateway-files/` of the bucket `x-gateway-aws-s3-bucket` names;
 * a batch made from it lives beside it (`{key}.batches/{uuid}/`, see ./batch.ts), in a job named
 * `gateway-cbatch-{uuid}` whose ARN is the batch's handle. Nothing else is kept anywhere.
 *
 * Handles coming back are held to the settings before any call: a job ARN of the settings' region,
 * an input file of the settings' bucket under the gateway's prefix (or the settings' own object key).
 */
import type { Readable } from 'node:stream';
import { GetModelInvocationJobCommand, ListModelInvocationJobsCommand } from '@aws-sdk/client-bedrock';
import type { BatchHandleKind, ClientBatchSupport, ProviderBatchJob } from '../batch';
import type { PageInput, ProviderPage } from '../types';
import { CLIENT_JOB_PREFIX, toJob } from './batch';
import { MIN_RECORDS } from './batch-limits';
import type { BedrockConnection } from './connection';
import { fileContent, GATEWAY_PREFIX } from './files';
import { parseS3Uri } from './s3-uri';

/** A job ARN: its region, and the 12-character id. */
const JOB_ARN = /^arn:aws(?:-[a-z]+)*:bedrock:([a-z0-9-]{1,32}):\d{12}:model-invocation-job\/[a-z0-9]{12}$/;
/** Bedrock's largest page. */
const MAX_RESULTS = 1000;

function ownsHandle(conn: BedrockConnection, kind: BatchHandleKind, handle: string): boolean {
  if (kind === 'batch') return JOB_ARN.exec(handle)?.[1] === conn.region;
  const location = parseS3Uri(handle);
  return location !== undefined && location.bucket === conn.bucket && (location.key.startsWith(GATEWAY_PREFIX) || location.key === conn.objectKey);
}

/** The caller's uploaded file, streamed from S3 (the id its upload answered: the object's URI). */
async function readInput(conn: BedrockConnection, fileId: string): Promise<Readable> {
  return (await fileContent(conn, fileId)).stream;
}

/**
 * Where a page starts: Bedrock's `nextToken` as the previous page gave it, or, when the cursor is a
 * batch (OpenAI's SDKs page with the last batch's id), the jobs submitted before that one.
 */
async function cursorOf(conn: BedrockConnection, after: string | undefined): Promise<{ nextToken?: string; submitTimeBefore?: Date }> {
  if (after === undefined || !JOB_ARN.test(after)) return { nextToken: after };
  const job = await conn.call('Amazon Bedrock', () => conn.control().send(new GetModelInvocationJobCommand({ jobIdentifier: after })));
  return { submitTimeBefore: job.submitTime };
}

/**
 * The client-mode jobs, newest first. Each ended job's counts come from its manifest (one S3 read
 * each, in parallel).
 */
async function list(conn: BedrockConnection, page: PageInput): Promise<ProviderPage<ProviderBatchJob>> {
  const command = new ListModelInvocationJobsCommand({
    nameContains: CLIENT_JOB_PREFIX,
    maxResults: Math.min(page.limit ?? 20, MAX_RESULTS),
    ...(await cursorOf(conn, page.after)),
    sortBy: 'CreationTime',
    sortOrder: 'Descending',
  });
  const listed = await conn.call('Amazon Bedrock', () => conn.control().send(command));
  const ours = (listed.invocationJobSummaries ?? []).filter((job) => job.jobName?.startsWith(CLIENT_JOB_PREFIX));
  const data = await Promise.all(ours.map((job) => toJob(conn, job)));
  return { data, hasMore: Boolean(listed.nextToken), nextAfter: listed.nextToken ?? null };
}

export const bedrockClientBatch: ClientBatchSupport<BedrockConnection> = {
  list,
  ownsHandle,
  readInput,
  limits: { minRequests: MIN_RECORDS },
  opaqueInputIds: true,
};
