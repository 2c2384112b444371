/** GET /fine_tuning/jobs/{id}. */
import type { ProviderJob } from '../types';
import { apiRequest } from '../api';
import { jobPath, type OpenAICompatibleConnection } from './connection';
import { toJob } from './mappers';
import { openAIJobSchema } from './schemas';

export async function getJob(conn: OpenAICompatibleConnection, id: string): Promise<ProviderJob> {
  return toJob(await apiRequest(conn, { answer: openAIJobSchema, method: 'GET', path: jobPath(id) }), conn.account);
}
