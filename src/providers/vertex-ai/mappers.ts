/**
 * Vertex AI tuning jobs ↔ the internal model. A TuningJob maps field to field: `name` is the id,
 * states per the providers table (CANCELLING stays `running`), `tunedModel.model` is the fine-tuned
 * model and `tunedModel.endpoint` what serves it, RFC 3339 times in Unix seconds, the billable tokens
 * of `tuningDataStats` as trained tokens. The create body takes only what Vertex can honour: a
 * setting it has no place for is a 400 naming it, never dropped.
 */
import { invalidField, type FieldPath } from '../../errors';
import { readJobOptions } from '../job-input';
import type { CreateJobInput, Hyperparameters, JobError, JobStatus, ProviderJob } from '../types';
import { vertexJobOptions } from './job-options';
import { isOpenModel } from './dataset';
import { datasetUri } from './references';
import { unixSeconds, type TuningJob } from './wire';

const STATES: Readonly<Record<string, JobStatus>> = {
  JOB_STATE_UNSPECIFIED: 'queued',
  JOB_STATE_QUEUED: 'queued',
  JOB_STATE_PENDING: 'queued',
  JOB_STATE_PAUSED: 'queued',
  JOB_STATE_RUNNING: 'running',
  JOB_STATE_UPDATING: 'running',
  JOB_STATE_CANCELLING: 'running',
  JOB_STATE_SUCCEEDED: 'succeeded',
  JOB_STATE_PARTIALLY_SUCCEEDED: 'succeeded',
  JOB_STATE_FAILED: 'failed',
  JOB_STATE_EXPIRED: 'failed',
  JOB_STATE_CANCELLED: 'cancelled',
};

/** google.rpc.Code by number, as the job's `error.code` carries it. */
const RPC_CODES = [
  'ok',
  'cancelled',
  'unknown',
  'invalid_argument',
  'deadline_exceeded',
  'not_found',
  'already_exists',
  'permission_denied',
  'resource_exhausted',
  'failed_precondition',
  'aborted',
  'out_of_range',
  'unimplemented',
  'internal',
  'unavailable',
  'data_loss',
  'unauthenticated',
];

/** The label carrying the gateway job id (see findJob), named like OpenAI's metadata key. */
export const GATEWAY_JOB_ID_LABEL = 'gateway_job_id';

const jobStatus = (job: TuningJob): JobStatus => STATES[job.state ?? ''] ?? 'running';

function toHyperparameters(job: TuningJob): Hyperparameters {
  const h = job.supervisedTuningSpec?.hyperParameters;
  const out: Hyperparameters = {};
  if (h?.epochCount !== undefined) out.nEpochs = h.epochCount;
  if (h?.batchSize !== undefined) out.batchSize = h.batchSize;
  if (h?.learningRateMultiplier !== undefined) out.learningRateMultiplier = h.learningRateMultiplier;
  return out;
}

/** A failed job's reason; a cancelled job's `error` (code 1, CANCELLED) only restates its status. */
function toJobError(job: TuningJob, status: JobStatus): JobError | null {
  if (status !== 'failed') return null;
  if (job.error?.message) return { code: RPC_CODES[job.error.code ?? 2] ?? 'unknown', message: job.error.message, param: null };
  return job.state === 'JOB_STATE_EXPIRED' ? { code: 'expired', message: 'The tuning job expired before it could run', param: null } : null;
}

export function toJob(job: TuningJob): ProviderJob {
  const status = jobStatus(job);
  const spec = job.supervisedTuningSpec;
  const hyperparameters = toHyperparameters(job);
  return {
    id: job.name,
    status,
    model: job.baseModel ?? '',
    fineTunedModel: job.tunedModel?.model ?? null,
    servingModel: job.tunedModel?.endpoint ?? null,
    trainedTokens: job.tuningDataStats?.supervisedTuningDataStats?.totalBillableTokenCount ?? null,
    error: toJobError(job, status),
    createdAt: unixSeconds(job.createTime),
    finishedAt: job.endTime ? unixSeconds(job.endTime) : null,
    estimatedFinish: null,
    hyperparameters,
    method: { type: 'supervised', hyperparameters },
    resultFiles: [],
    trainingFile: spec?.trainingDatasetUri ?? '',
    validationFile: spec?.validationDatasetUri ?? null,
    // Vertex AI tuning takes no seed.
    seed: null,
    suffix: job.tunedModelDisplayName ?? null,
    metadata: job.labels ?? null,
    // The Google Cloud project the job runs in: `projects/{project}/…`.
    organizationId: /^projects\/([^/]+)\//.exec(job.name)?.[1] ?? null,
  };
}

/** Where a hyperparameter sits in the caller's input (the legacy top-level form, or the method's). */
const hyperparameterPath = (input: CreateJobInput, name: keyof Hyperparameters): FieldPath =>
  input.legacyHyperparameters ? ['hyperparameters', name] : ['method', 'supervised', 'hyperparameters', name];

const NO_BATCH_SIZE = 'is not supported by Vertex AI for Gemini models (they take no batch size); leave it out or "auto"';
const NO_MULTIPLIER = 'is not supported by Vertex AI for open models: give provider_options.learning_rate';
const NO_LEARNING_RATE = 'is for open models; Gemini models take method.supervised.hyperparameters.learning_rate_multiplier';

/**
 * Vertex's hyperParameters: epochs for every model; Gemini models take a learning-rate multiplier
 * and no batch size (`adapterSize` is a LoRA rank, not a batch size); open models take a batch size
 * and an absolute learning rate. "auto" values are left to Vertex.
 */
function hyperParameters(input: CreateJobInput): Record<string, number> | undefined {
  const h = input.method?.hyperparameters ?? {};
  const open = isOpenModel(input.model);
  const out: Record<string, number> = {};
  if (typeof h.nEpochs === 'number') out.epochCount = h.nEpochs;
  if (typeof h.batchSize === 'number') {
    if (!open) throw invalidField(hyperparameterPath(input, 'batchSize'), NO_BATCH_SIZE);
    out.batchSize = h.batchSize;
  }
  if (typeof h.learningRateMultiplier === 'number') {
    if (open) throw invalidField(hyperparameterPath(input, 'learningRateMultiplier'), NO_MULTIPLIER);
    out.learningRateMultiplier = h.learningRateMultiplier;
  }
  const { learningRate } = readJobOptions(vertexJobOptions, input);
  if (learningRate !== undefined) {
    if (!open) throw invalidField(['providerOptions', 'learningRate'], NO_LEARNING_RATE);
    out.learningRate = learningRate;
  }
  return Object.keys(out).length ? out : undefined;
}

const LABEL_KEY = /^[a-z][a-z0-9_-]{0,62}$/;
const LABEL_VALUE = /^[a-z0-9_-]{0,63}$/;
const LABEL_RULES = 'becomes Vertex AI labels: keys and values of lower-case letters, digits, "_" and "-" (keys start with a letter), at most 63 characters';

/** The caller's metadata as Vertex labels (which take a narrower alphabet), plus the gateway job id. */
function labels(input: CreateJobInput): Record<string, string> | undefined {
  const out: Record<string, string> = { ...input.metadata };
  if (Object.entries(out).some(([key, value]) => !LABEL_KEY.test(key) || !LABEL_VALUE.test(value))) throw invalidField('metadata', LABEL_RULES);
  if (input.gatewayJobId) out[GATEWAY_JOB_ID_LABEL] = input.gatewayJobId;
  return Object.keys(out).length ? out : undefined;
}

/** The TuningJob to create (supervised tuning of `model` on the datasets' gs:// URIs). */
export function toCreateBody(input: CreateJobInput): Record<string, unknown> {
  if (input.method?.type === 'dpo') throw invalidField(['method', 'type'], 'must be "supervised": Vertex AI tuning through the gateway is supervised');
  const spec = {
    trainingDatasetUri: datasetUri(input.trainingFile, 'trainingFile'),
    validationDatasetUri: input.validationFile === undefined ? undefined : datasetUri(input.validationFile, 'validationFile'),
    hyperParameters: hyperParameters(input),
  };
  return { baseModel: input.model, tunedModelDisplayName: input.suffix, labels: labels(input), supervisedTuningSpec: spec };
}
