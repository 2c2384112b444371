/** POST /fine_tuning/jobs. Never retried: a repeat after a lost response would start a second job. */
import type { CreateJobInput, ProviderJob } from '../types';
import { apiRequest } from '../api';
import { type OpenAICompatibleConnection } from './connection';
import { toCreateJobBody, toJob } from './mappers';
import { openAIJobSchema } from './schemas';

export async function createJob(conn: OpenAICompatibleConnection, input: CreateJobInput): Promise<ProviderJob> {
  return toJob(
    await apiRequest(conn, { answer: openAIJobSchema, method: 'POST', path: '/fine_tuning/jobs', json: toCreateJobBody(input, conn) }),
    conn.account,
  );
}
