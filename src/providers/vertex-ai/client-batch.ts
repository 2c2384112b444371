/**
 * Vertex AI batches in client mode (../batch.ts `ClientBatchSupport`). The caller's OpenAI JSONL is
 * the object its upload put under `gateway-files/` of the bucket the settings name; a batch made
 * from it lives beside it (`{object}.batches/{uuid}/`, see ./batch.ts), in a job labelled
 * `gateway_cbatch` whose resource name is the batch's handle. Nothing else is kept anywhere.
 *
 * Handles coming back are held to the settings before any call: a job of the settings' location and
 * project (or a project number, which Vertex writes in names; calls use the settings' project and the
 * job's numeric id only), an input file of the settings' bucket under the gateway's prefix.
 */
import type { Readable } from 'node:stream';
import type { BatchHandleKind, ClientBatchSupport, ProviderBatchJob } from '../batch';
import type { PageInput, ProviderPage } from '../types';
import { CLIENT_LABEL, JOB_NAME, jobListSchema, jobsPath, toJob } from './batch';
import { googleFetch, VERTEX, vertexUrl, type VertexConnection } from './connection';
import { fileContent } from './files';
import { FILE_PREFIX } from './references';
import { parseAnswer } from './wire';

const GS_URI = /^gs:\/\/([^/]+)\/(.+)$/;

function ownsHandle(conn: VertexConnection, kind: BatchHandleKind, handle: string): boolean {
  if (kind === 'batch') {
    const name = JOB_NAME.exec(handle);
    return name !== null && name[2] === conn.region && (name[1] === conn.project || /^\d+$/.test(name[1]));
  }
  const uri = GS_URI.exec(handle);
  return uri !== null && uri[1] === conn.bucket && uri[2].startsWith(FILE_PREFIX) && !uri[2].split('/').some((part) => part === '.' || part === '..');
}

/** The caller's uploaded file, streamed from Cloud Storage (the id its upload answered: the object's URI). */
async function readInput(conn: VertexConnection, fileId: string): Promise<Readable> {
  return (await fileContent(conn, fileId)).stream;
}

const listJobs = async (conn: VertexConnection, query: Record<string, string | number | undefined>) => {
  const answer = await googleFetch(conn, VERTEX, { method: 'GET', url: vertexUrl(conn, jobsPath(conn), query) });
  return parseAnswer(jobListSchema, answer, VERTEX, 'batch prediction job list');
};

/**
 * The client-mode jobs (by their label), newest first. The cursor is Vertex's `pageToken` as the
 * previous page gave it, or, when it is a batch (OpenAI's SDKs page with the last batch's id), the
 * jobs created before that one.
 */
async function list(conn: VertexConnection, page: PageInput): Promise<ProviderPage<ProviderBatchJob>> {
  let filter = `labels.${CLIENT_LABEL}:*`;
  let pageToken = page.after;
  if (page.after !== undefined && JOB_NAME.test(page.after)) {
    const answer = await googleFetch(conn, VERTEX, { method: 'GET', url: vertexUrl(conn, `${jobsPath(conn)}/${JOB_NAME.exec(page.after)?.[3]}`) });
    const { createTime } = parseAnswer(jobListSchema.shape.batchPredictionJobs.unwrap().element, answer, VERTEX, 'batch prediction job');
    filter += ` AND create_time<"${createTime ?? ''}"`;
    pageToken = undefined;
  }
  const listed = await listJobs(conn, { filter, pageSize: page.limit ?? 20, pageToken });
  return {
    data: (listed.batchPredictionJobs ?? []).map((job) => toJob(conn, job)),
    hasMore: listed.nextPageToken !== undefined,
    nextAfter: listed.nextPageToken ?? null,
  };
}

export const vertexClientBatch: ClientBatchSupport<VertexConnection> = { list, ownsHandle, readInput, opaqueInputIds: true };
