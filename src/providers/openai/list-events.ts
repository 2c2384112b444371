/** GET /fine_tuning/jobs/{id}/events, newest first. */
import type { Page, PageInput, ProviderContext, ProviderEvent } from '../types';
import { jobPath, openaiRequest, pageQuery } from './client';
import { toEvent, toPage, type OpenAIEvent, type OpenAIList } from './mappers';

export async function listEvents(ctx: ProviderContext, id: string, page: PageInput): Promise<Page<ProviderEvent>> {
  const list = await openaiRequest<OpenAIList<OpenAIEvent>>(ctx, {
    method: 'GET',
    path: jobPath(id, '/events'),
    query: pageQuery(page),
  });
  return toPage(list, toEvent);
}
