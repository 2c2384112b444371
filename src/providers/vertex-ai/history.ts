/**
 * Vertex AI has no events or checkpoints endpoints: both are read off the tuning job. Events are
 * synthesised from its timestamps and state (created, started with the dataset's statistics,
 * finished), checkpoints from `tunedModel.checkpoints`. Ids and times depend only on the job, so
 * the same event or checkpoint reads the same on every call (the job monitor stores each once).
 */
import { invalidField } from '../../errors';
import type { PageInput, ProviderCheckpoint, ProviderEvent, ProviderPage } from '../types';
import { toJob } from './mappers';
import { resourceId } from './references';
import { unixSeconds, type TuningCheckpoint, type TuningJob } from './wire';

const event = (job: TuningJob, suffix: string, time: string, fields: Pick<ProviderEvent, 'level' | 'message' | 'data'>): ProviderEvent => ({
  id: `${resourceId(job.name)}-${suffix}`,
  createdAt: unixSeconds(time),
  type: 'message',
  ...fields,
});

function finishedEvent(job: TuningJob, endTime: string): ProviderEvent | null {
  const { status, error, fineTunedModel, servingModel } = toJob(job);
  switch (status) {
    case 'succeeded': {
      const message = `Tuning succeeded: tuned model ${fineTunedModel ?? '(unnamed)'}, served on ${servingModel ?? '(no endpoint)'}`;
      return event(job, status, endTime, { level: 'info', message, data: { fine_tuned_model: fineTunedModel, endpoint: servingModel } });
    }
    case 'failed':
      return event(job, status, endTime, { level: 'error', message: `Tuning failed: ${error?.message ?? 'no reason given'}`, data: { error } });
    case 'cancelled':
      return event(job, status, endTime, { level: 'info', message: 'Tuning cancelled', data: null });
    default:
      return null;
  }
}

/** The job's events, newest first. */
export function jobEvents(job: TuningJob): ProviderEvent[] {
  const stats = job.tuningDataStats?.supervisedTuningDataStats;
  const events = [
    event(job, 'created', job.createTime, {
      level: 'info',
      message: `Tuning job created: ${job.baseModel ?? 'base model'} on ${job.supervisedTuningSpec?.trainingDatasetUri ?? 'its dataset'}`,
      data: null,
    }),
  ];
  if (job.startTime) {
    const data = stats
      ? { examples: stats.tuningDatasetExampleCount ?? null, billable_tokens: stats.totalBillableTokenCount ?? null, steps: stats.tuningStepCount ?? null }
      : null;
    events.push(event(job, 'started', job.startTime, { level: 'info', message: 'Tuning started', data }));
  }
  const finished = job.endTime ? finishedEvent(job, job.endTime) : null;
  if (finished) events.push(finished);
  return events.reverse();
}

function toCheckpoint(job: TuningJob, checkpoint: TuningCheckpoint): ProviderCheckpoint {
  const metrics: Record<string, number> = {};
  if (checkpoint.epoch !== undefined) metrics.epoch = checkpoint.epoch;
  if (checkpoint.step !== undefined) metrics.step = checkpoint.step;
  return {
    id: `${resourceId(job.name)}-checkpoint-${checkpoint.checkpointId}`,
    // A checkpoint carries no time of its own; the job's start keeps it stable across reads.
    createdAt: unixSeconds(job.startTime ?? job.createTime),
    // What serves the checkpoint (chat calls it); a checkpoint without an endpoint is named by the tuned model.
    fineTunedModelCheckpoint: checkpoint.endpoint ?? `${job.tunedModel?.model ?? job.name}#checkpoint-${checkpoint.checkpointId}`,
    stepNumber: checkpoint.step ?? 0,
    metrics,
    fineTuningJobId: job.name,
  };
}

/** The tuned model's checkpoints, newest (highest step) first. */
export function jobCheckpoints(job: TuningJob): ProviderCheckpoint[] {
  return (job.tunedModel?.checkpoints ?? []).map((c) => toCheckpoint(job, c)).sort((a, b) => b.stepNumber - a.stepNumber);
}

/** A page of a list read whole from the job: the items after the one with id `after`. */
export function pageOf<T extends { id: string }>(items: T[], page: PageInput, what: string): ProviderPage<T> {
  const start = page.after === undefined ? 0 : items.findIndex((item) => item.id === page.after) + 1;
  if (start === 0 && page.after !== undefined) throw invalidField('after', `no ${what} of this job has the id '${page.after}'`, 'invalid_cursor');
  const data = items.slice(start, start + (page.limit ?? items.length));
  return { data, hasMore: start + data.length < items.length, nextAfter: data.at(-1)?.id ?? null };
}
