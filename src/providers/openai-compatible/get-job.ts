/** GET /fine_tuning/jobs/{id}. */
import type { ProviderJob } from '../types';
import { compatibleRequest, jobPath, type OpenAICompatibleConnection } from './connection';
import { toJob, type OpenAIJob } from './mappers';

export async function getJob(conn: OpenAICompatibleConnection, id: string): Promise<ProviderJob> {
  return toJob(await compatibleRequest<OpenAIJob>(conn, { method: 'GET', path: jobPath(id) }));
}
