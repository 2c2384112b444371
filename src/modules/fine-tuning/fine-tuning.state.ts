/**
 * The hosted job's state machine as pure functions: each takes the job as it is now (read under a
 * row lock, see FineTuningRepository.mutate) and returns the change to commit, with the events that
 * record it. Status changes are always recorded as events, whoever makes them (API or monitor).
 */
import type { ProviderCheckpoint, ProviderEvent, ProviderJob } from '../../providers/types';
import { isTerminal, type HostedJob, type Hyperparameters, type JobError, type JobStatus } from './fine-tuning.model';
import type { CheckpointDraft, EventDraft, JobChange } from './fine-tuning.repository';
import type { JobUpdate } from './fine-tuning.rows';

const fromUnix = (seconds: number | null) => (seconds === null ? null : new Date(seconds * 1000));

/** The event recording a status change (gateway-made: no provider event id). */
export function statusEvent(from: JobStatus, to: JobStatus, error?: JobError | null): EventDraft {
  const message = to === 'failed' && error ? `Job failed: ${error.message}` : to === 'cancelled' ? 'Job cancelled' : `Job status changed from ${from} to ${to}`;
  return { level: to === 'failed' ? 'error' : 'info', message, type: 'message', data: { status: to, previous_status: from } };
}

/** A status change (with its event) plus other column changes; null when the job is already finished. */
export function transition(job: HostedJob, to: JobStatus, data: JobUpdate = {}, events: EventDraft[] = []): JobChange | null {
  if (isTerminal(job.status)) return null;
  const error = data.error ?? job.error;
  const statusEvents = job.status === to ? [] : [statusEvent(job.status, to, error)];
  return { data: { ...data, status: to }, events: [...events, ...statusEvents] };
}

/** Failure before (or outside of) the provider's own job lifecycle, e.g. an upload or create refused. */
export function failed(job: HostedJob, error: JobError): JobChange | null {
  return transition(job, 'failed', { error, finishedAt: new Date() });
}

/** A local cancel; `providerCancelPending` asks the monitor to cancel a provider job that may exist. */
export function cancelled(job: HostedJob, providerCancelPending: boolean, events: EventDraft[] = []): JobChange | null {
  return transition(job, 'cancelled', { finishedAt: new Date(), providerCancelPending, nextPollAt: new Date() }, events);
}

export const providerEventDraft = (e: ProviderEvent): EventDraft => ({
  providerEventId: e.id,
  level: e.level,
  message: e.message,
  type: e.type,
  data: toJsonData(e.data),
  createdAt: new Date(e.createdAt * 1000),
});

/** Event data is the provider's JSON; anything else (absent, or not JSON) is stored as null. */
function toJsonData(data: unknown): EventDraft['data'] {
  if (data === undefined || data === null) return null;
  const json: unknown = JSON.parse(JSON.stringify(data));
  return isJsonData(json) ? json : null;
}

/** After a JSON round trip, an object or array is JSON through and through. */
const isJsonData = (value: unknown): value is NonNullable<EventDraft['data']> => value !== null && typeof value === 'object';

export const providerCheckpointDraft = (c: ProviderCheckpoint): CheckpointDraft => ({
  providerCheckpointId: c.id,
  fineTunedModelCheckpoint: c.fineTunedModelCheckpoint,
  stepNumber: c.stepNumber,
  metrics: c.metrics,
  createdAt: new Date(c.createdAt * 1000),
});

/**
 * The hyperparameters as the provider now reports them (its values replace "auto"), or null when
 * unchanged. OpenAI reports them in `method`; its deprecated top-level form is used when there is none.
 */
function settledHyperparameters(job: HostedJob, remote: ProviderJob): Hyperparameters | null {
  const reported = remote.method?.hyperparameters ?? remote.hyperparameters;
  if (!Object.keys(reported).length) return null;
  const current = job.method.hyperparameters;
  const merged = { ...current, ...reported };
  return sameJson(merged, current) ? null : merged;
}

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
const sameDate = (a: Date | null, b: Date | null) => (a?.getTime() ?? null) === (b?.getTime() ?? null);

/** The columns the provider's view of the job changes (empty when nothing differs). */
function changedColumns(job: HostedJob, remote: ProviderJob): JobUpdate {
  const data: JobUpdate = {};
  if (remote.fineTunedModel !== job.fineTunedModel) data.fineTunedModel = remote.fineTunedModel;
  if (remote.servingModel !== job.servingModel) data.servingModel = remote.servingModel;
  const trainedTokens = remote.trainedTokens === null ? null : Math.round(remote.trainedTokens);
  if (trainedTokens !== job.trainedTokens) data.trainedTokens = trainedTokens;
  if (!sameJson(remote.error, job.error)) data.error = remote.error;
  const finishedAt = fromUnix(remote.finishedAt);
  if (!sameDate(finishedAt, job.finishedAt)) data.finishedAt = finishedAt;
  const estimatedFinish = fromUnix(remote.estimatedFinish);
  if (!sameDate(estimatedFinish, job.estimatedFinish)) data.estimatedFinish = estimatedFinish;
  if (!sameJson(remote.resultFiles, job.resultFiles)) data.resultFiles = remote.resultFiles;
  const hyperparameters = settledHyperparameters(job, remote);
  if (hyperparameters) data.hyperparameters = hyperparameters;
  // A provider reports "failed" without an error object at times; the job still says why.
  if (remote.status === 'failed' && !remote.error && !job.error) {
    data.error = { code: 'provider_failed', message: 'The provider reported the job as failed', param: null };
  }
  return data;
}

/**
 * What the provider's view of the job changes here: status, model, tokens, error, times, result
 * files, the hyperparameters it settled on, plus new events and checkpoints. Null when nothing is
 * new (the monitor then backs off), or when the job was finished here meanwhile (e.g. cancelled).
 */
export function fromProviderJob(job: HostedJob, remote: ProviderJob, events: ProviderEvent[], checkpoints: ProviderCheckpoint[]): JobChange | null {
  if (isTerminal(job.status)) return null;
  const data = changedColumns(job, remote);
  const newEvents = events.map(providerEventDraft);
  const newCheckpoints = checkpoints.map(providerCheckpointDraft);
  if (remote.status === job.status && !Object.keys(data).length && !newEvents.length && !newCheckpoints.length) return null;
  const change = transition(job, remote.status, data, newEvents);
  return change && { ...change, checkpoints: newCheckpoints };
}
