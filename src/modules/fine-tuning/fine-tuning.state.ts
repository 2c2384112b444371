/**
 * The hosted job's state machine as pure functions: each takes the job as it is now (read under a
 * row lock, see FineTuningRepository.mutate) and returns the change to commit, with the events that
 * record it. Status changes are always recorded as events, whoever makes them (API or monitor).
 */
import { Prisma, type FineTuningJob } from '../../generated/prisma/client';
import type { JobStatus, ProviderCheckpoint, ProviderEvent, ProviderJob } from '../../providers/types';
import type { JobError } from './fine-tuning.mapper';
import { TERMINAL_STATUSES, type CheckpointDraft, type EventDraft, type JobChange } from './fine-tuning.repository';

export const isTerminal = (status: string) => (TERMINAL_STATUSES as readonly string[]).includes(status);

function asJobError(value: unknown): JobError | null {
  const e = value as Partial<JobError> | null | undefined;
  return e && typeof e === 'object' && typeof e.message === 'string' ? { code: String(e.code ?? 'error'), message: e.message, param: e.param ?? null } : null;
}

const fromUnix = (seconds: number | null) => (seconds === null ? null : new Date(seconds * 1000));

/** The event recording a status change (gateway-made: no provider event id). */
export function statusEvent(from: string, to: string, error?: JobError | null): EventDraft {
  const message =
    to === 'failed' && error ? `Job failed: ${error.message}` : to === 'cancelled' ? 'Job cancelled' : `Job status changed from ${from} to ${to}`;
  return {
    level: to === 'failed' ? 'error' : 'info',
    message,
    type: 'message',
    data: { status: to, previous_status: from },
  };
}

/** A status change (with its event) plus other column changes; null when the job is already finished. */
export function transition(
  job: FineTuningJob,
  to: JobStatus,
  data: Prisma.FineTuningJobUncheckedUpdateManyInput = {},
  events: EventDraft[] = [],
): JobChange | null {
  if (isTerminal(job.status)) return null;
  const error = asJobError(data.error) ?? asJobError(job.error);
  const statusEvents = job.status === to ? [] : [statusEvent(job.status, to, error)];
  return { data: { ...data, status: to }, events: [...events, ...statusEvents] };
}

/** Failure before (or outside of) the provider's own job lifecycle, e.g. an upload or create refused. */
export function failed(job: FineTuningJob, error: JobError): JobChange | null {
  return transition(job, 'failed', { error: error as unknown as Prisma.InputJsonValue, finishedAt: new Date() });
}

/** A local cancel (the provider job, if any, is cancelled by the caller or the monitor). */
export function cancelled(job: FineTuningJob, providerCancelPending: boolean): JobChange | null {
  const change = transition(job, 'cancelled', { finishedAt: new Date(), providerCancelPending, nextPollAt: new Date() });
  return change;
}

export const providerEventDraft = (e: ProviderEvent): EventDraft => ({
  providerEventId: e.id,
  level: e.level,
  message: e.message,
  type: e.type,
  data: (e.data ?? null) as Prisma.InputJsonValue | null,
  createdAt: new Date(e.createdAt * 1000),
});

export const providerCheckpointDraft = (c: ProviderCheckpoint): CheckpointDraft => ({
  providerCheckpointId: c.id,
  fineTunedModelCheckpoint: c.fineTunedModelCheckpoint,
  stepNumber: c.stepNumber,
  metrics: c.metrics as Prisma.InputJsonValue,
  createdAt: new Date(c.createdAt * 1000),
});

const asRecord = (value: unknown): Record<string, unknown> | null =>
  value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;

/**
 * The hyperparameters as the provider now reports them (its values replace "auto"), or null when
 * unchanged. OpenAI reports them in `method.<type>.hyperparameters`; the top-level `hyperparameters`
 * is its deprecated form, used when there is no method.
 */
function settledHyperparameters(job: FineTuningJob, remote: ProviderJob): Prisma.InputJsonValue | null {
  const current = asRecord(job.hyperparameters) ?? {};
  const method = asRecord(remote.method);
  const type = typeof method?.type === 'string' ? method.type : undefined;
  const fromMethod = type ? asRecord(asRecord(method?.[type])?.hyperparameters) : null;
  const reported = fromMethod ?? asRecord(remote.hyperparameters);
  if (!reported || !Object.keys(reported).length) return null;
  const merged = { ...current, ...reported };
  return sameJson(merged, current) ? null : (merged as Prisma.InputJsonValue);
}

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
const sameDate = (a: Date | null, b: Date | null) => (a?.getTime() ?? null) === (b?.getTime() ?? null);

/**
 * What the provider's view of the job changes here: status, model, tokens, error, times, result
 * files, the hyperparameters it settled on, plus new events and checkpoints. Null when nothing is
 * new (the monitor then backs off), or when the job was finished here meanwhile (e.g. cancelled).
 */
export function fromProviderJob(job: FineTuningJob, remote: ProviderJob, events: ProviderEvent[], checkpoints: ProviderCheckpoint[]): JobChange | null {
  if (isTerminal(job.status)) return null;
  const data: Prisma.FineTuningJobUncheckedUpdateManyInput = {};
  if (remote.fineTunedModel !== job.fineTunedModel) data.fineTunedModel = remote.fineTunedModel;
  const trainedTokens = remote.trainedTokens === null ? null : BigInt(Math.round(remote.trainedTokens));
  if (trainedTokens !== job.trainedTokens) data.trainedTokens = trainedTokens;
  if (!sameJson(remote.error, job.error)) data.error = remote.error ? (remote.error as Prisma.InputJsonValue) : Prisma.DbNull;
  const finishedAt = fromUnix(remote.finishedAt);
  if (!sameDate(finishedAt, job.finishedAt)) data.finishedAt = finishedAt;
  const estimatedFinish = fromUnix(remote.estimatedFinish);
  if (!sameDate(estimatedFinish, job.estimatedFinish)) data.estimatedFinish = estimatedFinish;
  if (!sameJson(remote.resultFiles, job.resultFiles)) data.resultFiles = remote.resultFiles;
  const hyperparameters = settledHyperparameters(job, remote);
  if (hyperparameters) data.hyperparameters = hyperparameters;
  if (job.seed === null && remote.seed !== null) data.seed = remote.seed;
  // A provider reports "failed" without an error object at times; the job still says why.
  if (remote.status === 'failed' && !remote.error && !job.error) {
    data.error = { code: 'provider_failed', message: 'The provider reported the job as failed', param: null };
  }
  const newEvents = events.map(providerEventDraft);
  const newCheckpoints = checkpoints.map(providerCheckpointDraft);
  const statusChanges = remote.status !== job.status;
  if (!statusChanges && !Object.keys(data).length && !newEvents.length && !newCheckpoints.length) return null;
  const change = transition(job, remote.status, data, newEvents)!;
  return { ...change, checkpoints: newCheckpoints };
}
