/** The tuning job an interrupted submission created, found by the label carrying the gateway job id. */
import type { ProviderJob } from '../types';
import type { VertexConnection } from './connection';
import { listJobs } from './list-jobs';
import { GATEWAY_JOB_ID_LABEL } from './mappers';

/** Gateway job ids are UUIDs; anything else cannot be a label value, nor go into a filter. */
const LABEL_VALUE = /^[a-z0-9_-]{1,63}$/;

export async function findJob(conn: VertexConnection, gatewayJobId: string): Promise<ProviderJob | undefined> {
  if (!LABEL_VALUE.test(gatewayJobId)) return undefined;
  const found = await listJobs(conn, { limit: 10, filter: `labels.${GATEWAY_JOB_ID_LABEL}="${gatewayJobId}"` });
  return found.data.find((job) => job.metadata?.[GATEWAY_JOB_ID_LABEL] === gatewayJobId);
}
