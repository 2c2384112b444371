/**
 * Events and checkpoints, synthesised: Fireworks has no endpoint for either, so both are read off the
 * job itself. Events: its creation, its current state, its progress (`jobProgress` as the data of a
 * `metrics` event, one per percentage reached) and how it ended. Checkpoints: the output model of a
 * completed job. Ids derive from what they describe, so every read gives the same event the same id
 * (the monitor stores each event once, collecting the progress a client-mode read shows only as it
 * stands).
 */
import { pageOf } from '../paging';
import type { PageInput, ProviderCheckpoint, ProviderEvent, ProviderPage } from '../types';
import { shortId, type FireworksConnection } from './connection';
import { readJob } from './jobs';
import { isFinished, jobStatus, unixSeconds } from './mappers';
import type { FireworksJob } from './schemas';

export async function listEvents(conn: FireworksConnection, id: string, page: PageInput): Promise<ProviderPage<ProviderEvent>> {
  const job = await readJob(conn, id);
  return pageOf(jobEvents(conn, job).reverse(), page);
}

export async function listCheckpoints(conn: FireworksConnection, id: string, page: PageInput): Promise<ProviderPage<ProviderCheckpoint>> {
  const job = await readJob(conn, id);
  return pageOf(jobStatus(job) === 'succeeded' && job.outputModel ? [outputCheckpoint(conn, job, job.outputModel)] : [], page);
}

/** The job's history as far as it shows, oldest first. */
function jobEvents(conn: FireworksConnection, job: FireworksJob): ProviderEvent[] {
  const jobId = shortId(conn, 'supervisedFineTuningJobs', job.name);
  const event = (key: string, at: string | null | undefined, message: string, extra: Partial<ProviderEvent> = {}): ProviderEvent => ({
    id: `${jobId}-${key}`,
    createdAt: unixSeconds(at),
    level: 'info',
    message,
    type: 'message',
    data: null,
    ...extra,
  });
  const created = event('created', job.createTime, `Fine-tuning job created: ${job.baseModel || job.warmStartFrom} on ${job.dataset}`);
  const state = job.state ?? 'JOB_STATE_UNSPECIFIED';
  const finished = isFinished(jobStatus(job));
  const current = event(`state-${state.toLowerCase()}`, finished ? job.completedTime || job.updateTime : job.updateTime, stateMessage(job), {
    level: jobStatus(job) === 'failed' ? 'error' : 'info',
    data: { state, ...(job.status?.message ? { status: job.status } : {}) },
  });
  const progress = job.jobProgress
    ? event(`progress-${job.jobProgress.percent ?? 0}`, job.updateTime, progressMessage(job.jobProgress), { type: 'metrics', data: job.jobProgress })
    : undefined;
  const waiting = state === 'JOB_STATE_CREATING' || state === 'JOB_STATE_UNSPECIFIED';
  return [created, ...(waiting || finished ? [] : [current]), ...(progress ? [progress] : []), ...(finished ? [current] : [])];
}

function stateMessage(job: FireworksJob): string {
  if (jobStatus(job) === 'succeeded') return `Job completed: output model ${job.outputModel}`;
  if (jobStatus(job) === 'failed') return `Job failed: ${job.status?.message || job.state}`;
  return `Job state: ${(job.state ?? '').replace(/^JOB_STATE_/, '')}`;
}

function progressMessage(progress: Record<string, number>): string {
  const details = Object.entries(progress).filter(([name]) => name !== 'percent');
  return `Training ${progress.percent ?? 0}% done${details.length ? ` (${details.map(([name, value]) => `${name} ${value}`).join(', ')})` : ''}`;
}

/** Fireworks reports no training steps: the output model's step number is the number of epochs trained. */
function outputCheckpoint(conn: FireworksConnection, job: FireworksJob, outputModel: string): ProviderCheckpoint {
  const jobId = shortId(conn, 'supervisedFineTuningJobs', job.name);
  const metrics = Object.fromEntries(Object.entries(job.jobProgress ?? {}).filter(([, value]) => typeof value === 'number'));
  return {
    id: `${jobId}-output-model`,
    createdAt: unixSeconds(job.completedTime || job.updateTime),
    fineTunedModelCheckpoint: outputModel,
    stepNumber: job.epochs ?? 0,
    metrics,
    fineTuningJobId: jobId,
  };
}
