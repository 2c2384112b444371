/** Providers' job times as OpenAI's Batch shows them: unix seconds (never milliseconds), one field per status reached. */
import type { BatchTimeName, ProviderBatchStatus } from './batch';

/** A Date or an RFC 3339 time as unix seconds; undefined when there is none. */
export function unixSeconds(time: Date | string | undefined | null): number | undefined {
  if (time === undefined || time === null || time === '') return undefined;
  const ms = (time instanceof Date ? time : new Date(time)).getTime();
  return Number.isNaN(ms) ? undefined : Math.floor(ms / 1000);
}

const TIME_OF: Partial<Record<ProviderBatchStatus, BatchTimeName>> = {
  finalizing: 'finalizing_at',
  completed: 'completed_at',
  failed: 'failed_at',
  expired: 'expired_at',
  cancelling: 'cancelling_at',
  cancelled: 'cancelled_at',
};

/**
 * The times of a job now `status`: `in_progress_at` once it started (when the provider says), the
 * status's own field at `at` (its end, or for `cancelling` its last change), `expires_at` when known.
 */
export function statusTimes(status: ProviderBatchStatus, at: { started?: number; changed?: number; expires?: number }): Partial<Record<BatchTimeName, number>> {
  const times: Partial<Record<BatchTimeName, number>> = {};
  if (at.started !== undefined && status !== 'validating') times.in_progress_at = at.started;
  if (at.expires !== undefined) times.expires_at = at.expires;
  const field = TIME_OF[status];
  if (field && at.changed !== undefined) times[field] = at.changed;
  return times;
}
