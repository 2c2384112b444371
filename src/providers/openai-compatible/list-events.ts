/** GET /fine_tuning/jobs/{id}/events, newest first. */
import type { PageInput, ProviderEvent, ProviderPage } from '../types';
import { apiRequest } from '../api';
import { jobPath, pageQuery, type OpenAICompatibleConnection } from './connection';
import { toEvent, toPage } from './mappers';
import { openAIEventListSchema } from './schemas';

export async function listEvents(conn: OpenAICompatibleConnection, id: string, page: PageInput): Promise<ProviderPage<ProviderEvent>> {
  return toPage(await apiRequest(conn, { answer: openAIEventListSchema, method: 'GET', path: jobPath(id, '/events'), query: pageQuery(page) }), toEvent);
}
