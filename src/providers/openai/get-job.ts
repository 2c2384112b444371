/** GET /fine_tuning/jobs/{id}. */
import type { ProviderContext, ProviderJob } from '../types';
import { jobPath, openaiRequest } from './client';
import { toJob, type OpenAIJob } from './mappers';

export async function getJob(ctx: ProviderContext, id: string): Promise<ProviderJob> {
  return toJob(await openaiRequest<OpenAIJob>(ctx, { method: 'GET', path: jobPath(id) }));
}
