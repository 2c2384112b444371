/**
 * POST /fine_tuning/jobs/{id}/cancel. Marked idempotent: cancelling twice leaves the job cancelled
 * (at worst the repeat gets a 400 "already cancelled"), so retrying a lost answer is safe.
 */
import type { ProviderContext, ProviderJob } from '../types';
import { jobPath, openaiRequest } from './client';
import { toJob, type OpenAIJob } from './mappers';

export async function cancelJob(ctx: ProviderContext, id: string): Promise<ProviderJob> {
  return toJob(await openaiRequest<OpenAIJob>(ctx, { method: 'POST', path: jobPath(id, '/cancel'), idempotent: true }));
}
