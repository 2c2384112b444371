/** GET …/tuningJobs, newest first, paged by Vertex's page token (the caller's `after`). */
import type { PageInput, ProviderJob, ProviderPage } from '../types';
import { googleFetch, parentPath, VERTEX, vertexUrl, type VertexConnection } from './connection';
import { toJob } from './mappers';
import { parseAnswer, tuningJobListSchema } from './wire';

export async function listJobs(conn: VertexConnection, page: PageInput & { filter?: string }): Promise<ProviderPage<ProviderJob>> {
  const query = { pageSize: page.limit, pageToken: page.after, filter: page.filter };
  const answer = await googleFetch(conn, VERTEX, { method: 'GET', url: vertexUrl(conn, `${parentPath(conn)}/tuningJobs`, query) });
  const list = parseAnswer(tuningJobListSchema, answer, VERTEX, 'tuning job list');
  return { data: (list.tuningJobs ?? []).map(toJob), hasMore: list.nextPageToken !== undefined, nextAfter: list.nextPageToken ?? null };
}
