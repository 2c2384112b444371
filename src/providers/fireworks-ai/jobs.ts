/**
 * GET …/supervisedFineTuningJobs/{id} and the list (newest first, Fireworks' page token as the
 * cursor). There is no cancel: Fireworks' REST API has none, and its DELETE destroys the job, so the
 * module offers no `cancelJob` (client mode answers `unsupported_operation`; a hosted job's cancel
 * stops the gateway following it, see job-cancellation.ts).
 */
import { GatewayError } from '../../errors';
import type { PageInput, ProviderJob, ProviderPage } from '../types';
import { controlRequest, resourcePath, type FireworksConnection } from './connection';
import { hostedJobId } from './create-job';
import { toJob } from './mappers';
import { jobListSchema, jobSchema } from './schemas';

/** Fireworks caps a page at 200. */
const MAX_PAGE_SIZE = 200;

export const readJob = (conn: FireworksConnection, id: string) =>
  controlRequest(conn, { answer: jobSchema, method: 'GET', path: resourcePath(conn, 'supervisedFineTuningJobs', id) });

export async function getJob(conn: FireworksConnection, id: string): Promise<ProviderJob> {
  return toJob(conn, await readJob(conn, id));
}

export async function listJobs(conn: FireworksConnection, page: PageInput): Promise<ProviderPage<ProviderJob>> {
  const query = { pageSize: page.limit === undefined ? undefined : Math.min(page.limit, MAX_PAGE_SIZE), pageToken: page.after, orderBy: 'createTime desc' };
  const list = await controlRequest(conn, {
    answer: jobListSchema,
    method: 'GET',
    path: '/supervisedFineTuningJobs',
    query,
  });
  return { data: (list.supervisedFineTuningJobs ?? []).map((j) => toJob(conn, j)), hasMore: !!list.nextPageToken, nextAfter: list.nextPageToken || null };
}

/** The job an interrupted hosted submission may have created: its id derives from the gateway job id. */
export async function findJob(conn: FireworksConnection, gatewayJobId: string): Promise<ProviderJob | undefined> {
  try {
    return await getJob(conn, hostedJobId(gatewayJobId));
  } catch (err) {
    if (err instanceof GatewayError && err.kind === 'provider' && err.status === 404) return undefined;
    throw err;
  }
}
