import type { FineTuningJob, FineTuningJobCheckpoint, FineTuningJobEvent } from '../../generated/prisma/client';
import { cursorListJson, listJson, unixOrNull, unixSeconds, type Page } from '../../http/openai-shapes';
import type {
  FineTuningHyperparametersType,
  FineTuningJobCheckpointType,
  FineTuningJobEventType,
  FineTuningJobStatusEnum,
  FineTuningJobType,
  FineTuningMethodType,
  FineTuningMethodTypeEnum,
} from './fine-tuning.types';


type Hyperparameters = Record<string, unknown>;

const asObject = (value: unknown): Record<string, unknown> | null =>
  value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;

/** The job's hyperparameters in OpenAI's spelling: "auto" until the provider reports its choice. */
export const hyperparametersOf = (job: FineTuningJob): Hyperparameters => asObject(job.hyperparameters) ?? {};

/** `supervised` unless the caller asked for another method. */
export const methodTypeOf = (job: FineTuningJob): 'supervised' | 'dpo' => (asObject(job.method)?.type === 'dpo' ? 'dpo' : 'supervised');

/** OpenAI's `method` object, with the job's current hyperparameters. */
export function methodOf(job: FineTuningJob): Record<string, unknown> {
  const type = methodTypeOf(job);
  return { type, [type]: { hyperparameters: hyperparametersOf(job) } };
}

export type JobError = { code: string; message: string; param: string | null };

export function errorOf(job: FineTuningJob): JobError | null {
  const e = asObject(job.error);
  if (!e) return null;
  return { code: String(e.code ?? 'error'), message: String(e.message ?? ''), param: typeof e.param === 'string' ? e.param : null };
}

const stringArray = (value: unknown): string[] => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []);

/** Stored as BIGINT (large jobs pass 2^31 tokens); well below 2^53, so a JSON number. */
const tokens = (job: FineTuningJob) => (job.trainedTokens === null ? null : Number(job.trainedTokens));

const metadataOf = (job: FineTuningJob): Record<string, string> | null => asObject(job.metadata) as Record<string, string> | null;

/** The REST job object: OpenAI's `fine_tuning.job` (api.md §5), times in Unix seconds. */
export function toJobJson(job: FineTuningJob) {
  return {
    id: job.id,
    object: 'fine_tuning.job' as const,
    created_at: unixSeconds(job.createdAt),
    error: errorOf(job),
    fine_tuned_model: job.fineTunedModel,
    finished_at: unixOrNull(job.finishedAt),
    hyperparameters: hyperparametersOf(job),
    model: job.model,
    organization_id: job.organisationId,
    result_files: stringArray(job.resultFiles),
    status: job.status,
    trained_tokens: tokens(job),
    training_file: job.trainingFileId,
    validation_file: job.validationFileId,
    seed: job.seed,
    estimated_finish: unixOrNull(job.estimatedFinish),
    method: methodOf(job),
    suffix: job.suffix,
    metadata: metadataOf(job),
  };
}

export const toJobListJson = (page: Page<FineTuningJob>) => listJson(page, toJobJson);

export function toEventJson(event: FineTuningJobEvent) {
  return {
    id: event.id,
    object: 'fine_tuning.job.event' as const,
    created_at: unixSeconds(event.createdAt),
    level: event.level,
    message: event.message,
    type: event.type ?? 'message',
    data: event.data ?? {},
  };
}

export const toEventListJson = (page: Page<FineTuningJobEvent>) => listJson(page, toEventJson);

export function toCheckpointJson(checkpoint: FineTuningJobCheckpoint) {
  return {
    id: checkpoint.id,
    object: 'fine_tuning.job.checkpoint' as const,
    created_at: unixSeconds(checkpoint.createdAt),
    fine_tuned_model_checkpoint: checkpoint.fineTunedModelCheckpoint,
    step_number: checkpoint.stepNumber,
    fine_tuning_job_id: checkpoint.jobId,
    metrics: asObject(checkpoint.metrics) ?? {},
  };
}

export const toCheckpointListJson = (page: Page<FineTuningJobCheckpoint>) => cursorListJson(page, toCheckpointJson);

const numberOrNull = (value: unknown) => (typeof value === 'number' ? value : null);

/** GraphQL hyperparameters: numbers, null for "auto". */
export function toHyperparametersType(hp: Hyperparameters): FineTuningHyperparametersType {
  return {
    nEpochs: numberOrNull(hp.n_epochs),
    batchSize: numberOrNull(hp.batch_size),
    learningRateMultiplier: numberOrNull(hp.learning_rate_multiplier),
    beta: numberOrNull(hp.beta),
  };
}

/** The GraphQL job object. */
export function toJobType(job: FineTuningJob): FineTuningJobType {
  const hyperparameters = toHyperparametersType(hyperparametersOf(job));
  const method: FineTuningMethodType = { type: methodTypeOf(job) as FineTuningMethodTypeEnum, hyperparameters };
  return {
    id: job.id,
    status: job.status as FineTuningJobStatusEnum,
    model: job.model,
    fineTunedModel: job.fineTunedModel,
    organisationId: job.organisationId,
    workspaceId: job.workspaceId,
    provider: job.provider,
    integration: `@${job.integrationSlug}`,
    trainingFileId: job.trainingFileId,
    validationFileId: job.validationFileId,
    suffix: job.suffix,
    seed: job.seed,
    method,
    hyperparameters,
    metadata: metadataOf(job),
    error: errorOf(job),
    trainedTokens: tokens(job),
    resultFiles: stringArray(job.resultFiles),
    createdAt: job.createdAt,
    finishedAt: job.finishedAt,
    estimatedFinish: job.estimatedFinish,
  };
}

export function toEventType(event: FineTuningJobEvent): FineTuningJobEventType {
  return {
    id: event.id,
    fineTuningJobId: event.jobId,
    createdAt: event.createdAt,
    level: event.level,
    message: event.message,
    type: event.type,
    data: event.data ?? null,
  };
}

export function toCheckpointType(checkpoint: FineTuningJobCheckpoint): FineTuningJobCheckpointType {
  return {
    id: checkpoint.id,
    fineTuningJobId: checkpoint.jobId,
    createdAt: checkpoint.createdAt,
    fineTunedModelCheckpoint: checkpoint.fineTunedModelCheckpoint,
    stepNumber: checkpoint.stepNumber,
    metrics: (asObject(checkpoint.metrics) ?? {}) as Record<string, number>,
  };
}
