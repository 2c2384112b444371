/**
 * Fireworks AI's wire objects (proto3 JSON: RFC 3339 times, int64 as strings, unset fields as zero
 * values) → the gateway's internal model. A dataset is the gateway's file (Fireworks reports no byte
 * size for it); a supervised fine-tuning job maps onto OpenAI's job, its `outputModel` becoming
 * `fine_tuned_model` once the job has completed.
 */
import type { FileStatus, Hyperparameters, JobStatus, ProviderFile, ProviderJob } from '../types';
import { shortId, type FireworksConnection } from './connection';
import type { FireworksDataset, FireworksJob, FireworksStatus } from './schemas';

/** An RFC 3339 time in Unix seconds (0 when absent or unreadable). */
export const unixSeconds = (time: string | null | undefined): number => {
  const ms = time ? Date.parse(time) : NaN;
  return Number.isNaN(ms) ? 0 : Math.floor(ms / 1000);
};

const isFailure = (status: FireworksStatus | null | undefined) => !!status?.code && status.code !== 'OK';

function datasetStatus(d: FireworksDataset): FileStatus {
  if (isFailure(d.status)) return 'error';
  return d.state === 'READY' ? 'processed' : 'uploaded';
}

/** Datasets hold fine-tuning data only; Fireworks does not report their size in bytes (0 here). */
export const toFile = (conn: FireworksConnection, d: FireworksDataset): ProviderFile => ({
  id: shortId(conn, 'datasets', d.name),
  bytes: 0,
  createdAt: unixSeconds(d.createTime),
  filename: d.displayName || shortId(conn, 'datasets', d.name),
  purpose: 'fine-tune',
  status: datasetStatus(d),
  statusDetails: isFailure(d.status) ? (d.status?.message ?? null) : null,
});

/** Fireworks' job states (providers.md): `CANCELLING` is still stopping; a job being deleted is over. */
const JOB_STATUS: Readonly<Record<string, JobStatus>> = {
  JOB_STATE_UNSPECIFIED: 'queued',
  JOB_STATE_CREATING: 'queued',
  JOB_STATE_PENDING: 'queued',
  JOB_STATE_CREATING_INPUT_DATASET: 'queued',
  JOB_STATE_RE_QUEUEING: 'queued',
  JOB_STATE_IDLE: 'queued',
  JOB_STATE_PAUSED: 'queued',
  JOB_STATE_VALIDATING: 'validating_files',
  JOB_STATE_RUNNING: 'running',
  JOB_STATE_EVALUATION: 'running',
  JOB_STATE_WRITING_RESULTS: 'running',
  JOB_STATE_ROLLOUT: 'running',
  JOB_STATE_CANCELLING: 'running',
  JOB_STATE_COMPLETED: 'succeeded',
  JOB_STATE_EARLY_STOPPED: 'succeeded',
  JOB_STATE_FAILED: 'failed',
  JOB_STATE_EXPIRED: 'failed',
  JOB_STATE_CANCELLED: 'cancelled',
  JOB_STATE_DELETING: 'cancelled',
  JOB_STATE_DELETING_CLEANING_UP: 'cancelled',
};

export const jobStatus = (j: FireworksJob): JobStatus => JOB_STATUS[j.state ?? 'JOB_STATE_UNSPECIFIED'] ?? 'running';

export const isFinished = (status: JobStatus) => status === 'succeeded' || status === 'failed' || status === 'cancelled';

export function toJob(conn: FireworksConnection, j: FireworksJob): ProviderJob {
  const status = jobStatus(j);
  const hyperparameters: Hyperparameters = {};
  if (j.epochs) hyperparameters.nEpochs = j.epochs;
  if (j.batchSizeSamples) hyperparameters.batchSize = j.batchSizeSamples;
  const succeeded = status === 'succeeded';
  return {
    id: shortId(conn, 'supervisedFineTuningJobs', j.name),
    status,
    model: j.baseModel || j.warmStartFrom || '',
    fineTunedModel: succeeded ? j.outputModel || null : null,
    servingModel: null,
    trainedTokens: succeeded ? (j.jobProgress?.inputTokens ?? null) : null,
    error:
      status === 'failed'
        ? { code: j.status?.code || 'job_failed', message: j.status?.message || 'Fireworks AI reported the job as failed', param: null }
        : null,
    createdAt: unixSeconds(j.createTime),
    finishedAt: isFinished(status) ? unixSeconds(j.completedTime || j.updateTime) : null,
    estimatedFinish: null,
    hyperparameters,
    method: { type: 'supervised', hyperparameters },
    resultFiles: [],
    trainingFile: shortId(conn, 'datasets', j.dataset),
    validationFile: j.evaluationDataset ? shortId(conn, 'datasets', j.evaluationDataset) : null,
    // Fireworks' fine-tuning jobs take no seed.
    seed: null,
    suffix: j.displayName || null,
    metadata: null,
    organizationId: conn.account,
  };
}
