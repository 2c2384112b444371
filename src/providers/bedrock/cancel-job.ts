/**
 * StopModelCustomizationJob, then the job as it stands: `Stopping` reads `running` until Bedrock has
 * stopped it. Stopping a finished job is Bedrock's 400, which the caller reads as a refusal.
 */
import { StopModelCustomizationJobCommand } from '@aws-sdk/client-bedrock';
import type { ProviderJob } from '../types';
import type { BedrockConnection } from './connection';
import { getJob } from './get-job';

export async function cancelJob(conn: BedrockConnection, id: string): Promise<ProviderJob> {
  await conn.call('Amazon Bedrock', () => conn.control().send(new StopModelCustomizationJobCommand({ jobIdentifier: id })));
  return getJob(conn, id);
}
