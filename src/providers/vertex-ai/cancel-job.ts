/**
 * POST …/tuningJobs/{id}:cancel, then the job re-read: Vertex answers the cancel with `{}`. Marked
 * idempotent (cancelling a job that is already cancelling changes nothing), so a lost answer is retried.
 */
import type { ProviderJob } from '../types';
import { googleFetch, VERTEX, vertexUrl, type VertexConnection } from './connection';
import { getJob } from './get-job';
import { tuningJobName } from './references';

export async function cancelJob(conn: VertexConnection, id: string): Promise<ProviderJob> {
  const name = tuningJobName(conn, id);
  await googleFetch(conn, VERTEX, { method: 'POST', url: vertexUrl(conn, `${name}:cancel`), json: {}, idempotent: true });
  return getJob(conn, name);
}
