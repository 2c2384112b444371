/** GetModelCustomizationJob, by job ARN (client mode's job id) or job name. */
import { GetModelCustomizationJobCommand, type GetModelCustomizationJobResponse } from '@aws-sdk/client-bedrock';
import type { ProviderJob } from '../types';
import type { BedrockConnection } from './connection';
import { toJob } from './mappers';

/** The job as Bedrock reports it (events and checkpoints are read from it too). */
export const readJob = (conn: BedrockConnection, id: string): Promise<GetModelCustomizationJobResponse> =>
  conn.call('Amazon Bedrock', () => conn.control().send(new GetModelCustomizationJobCommand({ jobIdentifier: id })));

export async function getJob(conn: BedrockConnection, id: string): Promise<ProviderJob> {
  return toJob(await readJob(conn, id));
}
