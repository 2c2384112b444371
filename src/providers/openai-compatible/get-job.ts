/** GET /fine_tuning/jobs/{id}. */
import type { ProviderJob } from '../types';
import { apiRequest } from '../api';
import { jobPath, type OpenAICompatibleConnection } from './connection';
import { toJob, type OpenAIJob } from './mappers';

export async function getJob(conn: OpenAICompatibleConnection, id: string): Promise<ProviderJob> {
  return toJob(await apiRequest<OpenAIJob>(conn, { method: 'GET', path: jobPath(id) }), conn.account);
}
