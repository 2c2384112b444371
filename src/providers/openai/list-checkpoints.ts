/** GET /fine_tuning/jobs/{id}/checkpoints, newest first. */
import type { Page, PageInput, ProviderCheckpoint, ProviderContext } from '../types';
import { jobPath, openaiRequest, pageQuery } from './client';
import { toCheckpoint, toPage, type OpenAICheckpoint, type OpenAIList } from './mappers';

export async function listCheckpoints(
  ctx: ProviderContext,
  id: string,
  page: PageInput,
): Promise<Page<ProviderCheckpoint>> {
  const list = await openaiRequest<OpenAIList<OpenAICheckpoint>>(ctx, {
    method: 'GET',
    path: jobPath(id, '/checkpoints'),
    query: pageQuery(page),
  });
  return toPage(list, toCheckpoint);
}
