/**
 * The provider job an interrupted submission created, found by the gateway job id the create call
 * put in its metadata (newest first, a few pages: an interrupted submission is recent).
 */
import type { ProviderJob } from '../types';
import type { OpenAICompatibleConnection } from './connection';
import { listJobs } from './list-jobs';
import { GATEWAY_JOB_ID_METADATA_KEY } from './mappers';

const MAX_LOOKUP_PAGES = 5;

export async function findJob(conn: OpenAICompatibleConnection, gatewayJobId: string): Promise<ProviderJob | undefined> {
  let after: string | undefined;
  for (let page = 0; page < MAX_LOOKUP_PAGES; page++) {
    const found = await listJobs(conn, { after, limit: 100 });
    const mine = found.data.find((job) => job.metadata?.[GATEWAY_JOB_ID_METADATA_KEY] === gatewayJobId);
    if (mine) return mine;
    if (!found.hasMore || !found.nextAfter) return undefined;
    after = found.nextAfter;
  }
  return undefined;
}
