/**
 * GET /fine-tunes/{id}, GET /fine-tunes, POST /fine-tunes/{id}/cancel. Together's list is not
 * paged: the gateway orders it newest first and pages it with the last job id as the cursor.
 */
import { pageOf } from '../paging';
import type { PageInput, ProviderJob, ProviderPage } from '../types';
import { apiRequest } from '../api';
import { jobPath, type TogetherConnection } from './connection';
import { toJob } from './mappers';
import { togetherJobListSchema, togetherJobSchema } from './schemas';

export async function getJob(conn: TogetherConnection, id: string): Promise<ProviderJob> {
  return toJob(await apiRequest(conn, { answer: togetherJobSchema, method: 'GET', path: jobPath(id) }));
}

export async function listJobs(conn: TogetherConnection, page: PageInput): Promise<ProviderPage<ProviderJob>> {
  const list = await apiRequest(conn, { answer: togetherJobListSchema, method: 'GET', path: '/fine-tunes' });
  // Together lists oldest first; reversed first, jobs created in the same millisecond stay newest first too.
  const newestFirst = [...(list.data ?? [])].reverse().sort((a, b) => Date.parse(b.created_at) - Date.parse(a.created_at));
  return pageOf(newestFirst.map(toJob), page);
}

/**
 * Answers `cancel_requested` (still running) until Together has stopped the job. Marked idempotent:
 * a repeat leaves the job cancelling (at worst a 400 once it has finished).
 */
export async function cancelJob(conn: TogetherConnection, id: string): Promise<ProviderJob> {
  return toJob(await apiRequest(conn, { answer: togetherJobSchema, method: 'POST', path: jobPath(id, '/cancel'), idempotent: true }));
}
