/**
 * POST /fine_tuning/jobs/{id}/cancel. Marked idempotent: cancelling twice leaves the job cancelled
 * (at worst the repeat gets a 400 "already cancelled"), so retrying a lost answer is safe.
 */
import type { ProviderJob } from '../types';
import { apiRequest } from '../api';
import { jobPath, type OpenAICompatibleConnection } from './connection';
import { toJob } from './mappers';
import { openAIJobSchema } from './schemas';

export async function cancelJob(conn: OpenAICompatibleConnection, id: string): Promise<ProviderJob> {
  return toJob(await apiRequest(conn, { answer: openAIJobSchema, method: 'POST', path: jobPath(id, '/cancel'), idempotent: true }), conn.account);
}
