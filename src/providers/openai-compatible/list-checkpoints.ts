/** GET /fine_tuning/jobs/{id}/checkpoints, newest first. */
import type { PageInput, ProviderCheckpoint, ProviderPage } from '../types';
import { apiRequest } from '../api';
import { jobPath, pageQuery, type OpenAICompatibleConnection } from './connection';
import { toCheckpoint, toPage } from './mappers';
import { openAICheckpointListSchema } from './schemas';

export async function listCheckpoints(conn: OpenAICompatibleConnection, id: string, page: PageInput): Promise<ProviderPage<ProviderCheckpoint>> {
  return toPage(
    await apiRequest(conn, { answer: openAICheckpointListSchema, method: 'GET', path: jobPath(id, '/checkpoints'), query: pageQuery(page) }),
    toCheckpoint,
  );
}
