/**
 * Together AI's wire objects → the gateway's internal model. Together times its files in Unix
 * seconds and its jobs in ISO strings; its FileResponse capitalises `FileType`/`Processed`; a job's
 * result model is `model_output_name`, reported here once the job has completed.
 */
import type { FileStatus, Hyperparameters, JobStatus, ProviderFile, ProviderJob } from '../types';
import type { TogetherEvent, TogetherFile, TogetherJob } from './schemas';

/** An ISO time in Unix seconds (0 when absent or unreadable). */
export const unixSeconds = (iso: string | null | undefined): number => {
  const ms = iso ? Date.parse(iso) : NaN;
  return Number.isNaN(ms) ? 0 : Math.floor(ms / 1000);
};

/** Together's processing states as OpenAI's file statuses (still being validated: `uploaded`). */
const FILE_STATUS: Readonly<Record<string, FileStatus>> = {
  PENDING: 'uploaded',
  QUEUED: 'uploaded',
  RUNNING: 'uploaded',
  COMPLETED: 'processed',
  FAILED: 'error',
  INVALID_FORMAT: 'error',
};

/** Together's batch purposes in OpenAI's words (client-mode answers are OpenAI's file objects). */
const OPENAI_PURPOSES: Readonly<Record<string, string>> = { 'batch-api': 'batch', 'batch-generated': 'batch_output' };

export const toFile = (f: TogetherFile): ProviderFile => ({
  id: f.id,
  bytes: f.bytes,
  createdAt: f.created_at,
  filename: f.filename,
  purpose: OPENAI_PURPOSES[f.purpose] ?? f.purpose,
  // Files Together does not validate (other purposes) carry no processing status: they are ready.
  status: f.processing_status ? (FILE_STATUS[f.processing_status] ?? 'uploaded') : 'processed',
  ...(f.processing_status ? { providerStatus: f.processing_status } : {}),
  statusDetails: f.validation_report?.error ?? null,
});

/** `cancel_requested` is still stopping: it stays running until Together reports `cancelled`. */
const JOB_STATUS: Readonly<Record<string, JobStatus>> = {
  pending: 'queued',
  queued: 'queued',
  running: 'running',
  compressing: 'running',
  uploading: 'running',
  cancel_requested: 'running',
  cancelled: 'cancelled',
  error: 'failed',
  completed: 'succeeded',
};

const TERMINAL: ReadonlySet<JobStatus> = new Set(['succeeded', 'failed', 'cancelled']);

export function toJob(j: TogetherJob): ProviderJob {
  const status = JOB_STATUS[j.status] ?? 'running';
  const hyperparameters = toHyperparameters(j);
  const succeeded = status === 'succeeded';
  return {
    id: j.id,
    status,
    model: j.model,
    fineTunedModel: succeeded ? (j.model_output_name ?? null) : null,
    servingModel: null,
    trainedTokens: succeeded && j.token_count ? j.token_count : null,
    error: status === 'failed' ? toJobError(j.events) : null,
    createdAt: unixSeconds(j.created_at),
    finishedAt: TERMINAL.has(status) ? unixSeconds(j.updated_at ?? j.created_at) : null,
    estimatedFinish: j.progress?.estimate_available && j.updated_at ? unixSeconds(j.updated_at) + Math.round(j.progress.seconds_remaining ?? 0) : null,
    hyperparameters,
    method: { type: j.training_method?.method === 'dpo' ? 'dpo' : 'supervised', hyperparameters },
    resultFiles: [],
    trainingFile: j.training_file,
    validationFile: j.validation_file || null,
    // The seed sent with the job (null when none was: Together does not say which it used).
    seed: j.random_seed ?? null,
    suffix: j.suffix || null,
    metadata: null,
    // Together's jobs name no account or organisation.
    organizationId: null,
  };
}

function toHyperparameters(j: TogetherJob): Hyperparameters {
  const out: Hyperparameters = {};
  if (typeof j.n_epochs === 'number') out.nEpochs = j.n_epochs;
  if (typeof j.batch_size === 'number') out.batchSize = j.batch_size;
  if (typeof j.training_method?.dpo_beta === 'number') out.beta = j.training_method.dpo_beta;
  return out;
}

/** Together says why a job failed in its last `job_error` event (only a job's GET carries events). */
function toJobError(events: TogetherEvent[] | null | undefined): ProviderJob['error'] {
  const failure = events?.filter((e) => e.type === 'job_error' || e.level === 'error').at(-1);
  return { code: 'job_error', message: failure?.message || 'Together AI reported the job as failed', param: null };
}
