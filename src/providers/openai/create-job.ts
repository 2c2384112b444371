/** POST /fine_tuning/jobs. Never retried: a repeat after a lost response would start a second job. */
import type { CreateJobInput, ProviderContext, ProviderJob } from '../types';
import { openaiRequest } from './client';
import { toCreateJobBody, toJob, type OpenAIJob } from './mappers';

export async function createJob(ctx: ProviderContext, input: CreateJobInput): Promise<ProviderJob> {
  const body = toCreateJobBody(input);
  return toJob(await openaiRequest<OpenAIJob>(ctx, { method: 'POST', path: '/fine_tuning/jobs', json: body }));
}
