/**
 * The Bedrock job an interrupted submission of a hosted job created: it bears the name made from the
 * gateway job id (create-job.ts), unless the caller chose one — then the repeated create, carrying the
 * same clientRequestToken, gets the job back from Bedrock instead.
 */
import { GatewayError } from '../../errors';
import type { ProviderJob } from '../types';
import type { BedrockConnection } from './connection';
import { hostedJobName } from './create-job';
import { readJob } from './get-job';
import { toJob } from './mappers';

export async function findJob(conn: BedrockConnection, gatewayJobId: string): Promise<ProviderJob | undefined> {
  try {
    const job = await readJob(conn, hostedJobName(gatewayJobId));
    return job.clientRequestToken === undefined || job.clientRequestToken === gatewayJobId ? toJob(job) : undefined;
  } catch (err) {
    if (err instanceof GatewayError && err.status === 404) return undefined;
    throw err;
  }
}
