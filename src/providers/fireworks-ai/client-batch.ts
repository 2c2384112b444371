/**
 * Fireworks batches in client mode (../batch.ts `ClientBatchSupport`). The caller's OpenAI JSONL is a
 * dataset its upload made in the settings' account; a batch made from it has its own datasets and job
 * (`gw-cbatch-…`, see ./batch.ts), the job's resource name being the batch's handle and its display
 * name the caller's dataset. Nothing else is kept anywhere.
 *
 * Handles coming back are held to the settings before any call: a job or dataset of the settings'
 * account, its id a Fireworks resource id (one path segment).
 */
import type { Readable } from 'node:stream';
import type { BatchHandleKind, ClientBatchSupport, ProviderBatchJob } from '../batch';
import type { PageInput, ProviderPage } from '../types';
import { CLIENT_JOB_PREFIX, toJob } from './batch';
import { controlRequest, RESOURCE_ID, resourcePath, type FireworksConnection } from './connection';
import { fileContent } from './datasets';
import { batchJobListSchema, batchJobSchema } from './schemas';

/** Fireworks caps a page at 200. */
const MAX_PAGE_SIZE = 200;
const JOB_NAME = /^accounts\/([a-z0-9-]{1,63})\/batchInferenceJobs\/([a-z0-9-]{1,63})$/;

function ownsHandle(conn: FireworksConnection, kind: BatchHandleKind, handle: string): boolean {
  if (kind === 'batch') {
    const name = JOB_NAME.exec(handle);
    return name !== null && name[1] === conn.account && RESOURCE_ID.test(name[2]) && name[2].startsWith(CLIENT_JOB_PREFIX);
  }
  // Uploads answer the dataset's short id, of the settings' account.
  return RESOURCE_ID.test(handle);
}

/** The caller's uploaded dataset, streamed through its signed download URLs. */
async function readInput(conn: FireworksConnection, fileId: string): Promise<Readable> {
  return (await fileContent(conn, fileId)).stream;
}

/**
 * The client-mode jobs, newest first. The cursor is Fireworks' `pageToken` as the previous page gave
 * it, or, when it is a batch (OpenAI's SDKs page with the last batch's id), the jobs created before
 * that one. Fireworks lists every batch job of the account: a page keeps the gateway's client-mode
 * ones, so it may hold fewer than `limit` while more follow.
 */
async function list(conn: FireworksConnection, page: PageInput): Promise<ProviderPage<ProviderBatchJob>> {
  const query: Record<string, string | number | undefined> = { pageSize: Math.min(page.limit ?? 20, MAX_PAGE_SIZE), orderBy: 'createTime desc' };
  if (page.after !== undefined && JOB_NAME.test(page.after)) {
    const path = resourcePath(conn, 'batchInferenceJobs', page.after);
    const after = await controlRequest(conn, { answer: batchJobSchema, method: 'GET', path });
    query.filter = `create_time < "${after.createTime ?? ''}"`;
  } else query.pageToken = page.after;
  const listed = await controlRequest(conn, { answer: batchJobListSchema, method: 'GET', path: '/batchInferenceJobs', query });
  const ours = (listed.batchInferenceJobs ?? []).filter((job) => ownsHandle(conn, 'batch', job.name));
  return { data: ours.map((job) => toJob(job)), hasMore: Boolean(listed.nextPageToken), nextAfter: listed.nextPageToken || null };
}

export const fireworksClientBatch: ClientBatchSupport<FireworksConnection> = { list, ownsHandle, readInput, opaqueInputIds: true };
