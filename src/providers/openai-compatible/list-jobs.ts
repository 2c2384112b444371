/** GET /fine_tuning/jobs, newest first, cursor-paged by job id. */
import type { PageInput, ProviderJob, ProviderPage } from '../types';
import { apiRequest } from '../api';
import { pageQuery, type OpenAICompatibleConnection } from './connection';
import { toJob, toPage } from './mappers';
import { openAIJobListSchema } from './schemas';

export async function listJobs(conn: OpenAICompatibleConnection, page: PageInput): Promise<ProviderPage<ProviderJob>> {
  const list = await apiRequest(conn, { answer: openAIJobListSchema, method: 'GET', path: '/fine_tuning/jobs', query: pageQuery(page) });
  return toPage(list, (job) => toJob(job, conn.account));
}
