/** GET /fine_tuning/jobs, newest first, cursor-paged by job id. */
import type { Page, PageInput, ProviderContext, ProviderJob } from '../types';
import { openaiRequest, pageQuery } from './client';
import { toJob, toPage, type OpenAIJob, type OpenAIList } from './mappers';

export async function listJobs(ctx: ProviderContext, page: PageInput): Promise<Page<ProviderJob>> {
  const list = await openaiRequest<OpenAIList<OpenAIJob>>(ctx, {
    method: 'GET',
    path: '/fine_tuning/jobs',
    query: pageQuery(page),
  });
  return toPage(list, toJob);
}
