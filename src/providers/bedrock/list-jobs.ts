/**
 * ListModelCustomizationJobs, newest first; Bedrock's `nextToken` is the cursor (`after`). The
 * summaries lack the data configuration and hyperparameters: get a job for all of it.
 */
import { ListModelCustomizationJobsCommand, type ListModelCustomizationJobsCommandInput } from '@aws-sdk/client-bedrock';
import type { PageInput, ProviderJob, ProviderPage } from '../types';
import type { BedrockConnection } from './connection';
import { fromSummary, toJob } from './mappers';

export async function listJobs(conn: BedrockConnection, page: PageInput): Promise<ProviderPage<ProviderJob>> {
  const input: ListModelCustomizationJobsCommandInput = { maxResults: page.limit, nextToken: page.after, sortBy: 'CreationTime', sortOrder: 'Descending' };
  const listed = await conn.call('Amazon Bedrock', () => conn.control().send(new ListModelCustomizationJobsCommand(input)));
  const data = (listed.modelCustomizationJobSummaries ?? []).map((summary) => toJob(fromSummary(summary)));
  return { data, hasMore: listed.nextToken !== undefined, nextAfter: listed.nextToken ?? null };
}
