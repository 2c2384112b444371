import { isTerminal, type HostedJob } from '../fine-tuning/fine-tuning.model';
import type { UsageRow } from './usage.model';

/** The ledger's integer columns (Postgres `integer`). */
const INT_MAX = 2 ** 31 - 1;

/** The status a finished job's row records, as the caller of a call would have seen it. */
const JOB_STATUS = { succeeded: 200, cancelled: 499, failed: 500 } as const;

/**
 * The ledger row of a hosted job that has just finished (`before` not finished, `after` finished):
 * its trained tokens as input tokens; null for any other change. Written in the transaction that
 * finishes the job, so every job is counted exactly once whichever replica's monitor saw it end.
 */
export function finishedJobUsage(before: HostedJob, after: HostedJob): UsageRow | null {
  if (isTerminal(before.status) || !isTerminal(after.status)) return null;
  const finishedAt = after.finishedAt ?? new Date();
  return {
    time: new Date(),
    organisationId: after.organisationId,
    workspaceId: after.workspaceId,
    apiKeyId: null,
    operation: 'fine_tuning',
    provider: after.provider,
    integration: after.integrationSlug,
    model: after.fineTunedModel ?? after.model,
    baseModel: after.model,
    inputTokens: Math.min(INT_MAX, after.trainedTokens ?? 0),
    cachedTokens: 0,
    outputTokens: 0,
    latencyMs: Math.min(INT_MAX, Math.max(0, finishedAt.getTime() - after.createdAt.getTime())),
    ttftMs: null,
    status: JOB_STATUS[after.status as keyof typeof JOB_STATUS],
    mode: 'hosted',
    streamed: false,
    batch: false,
    requestId: after.providerJobId,
  };
}
