import { restParam } from '../../http/case';
import { cursorListJson, listJson, unixOrNull, unixSeconds, type Page } from '../../http/openai-shapes';
import type { Hyperparameters, JobMethod, ProviderCheckpoint, ProviderEvent, ProviderJob } from '../../providers/types';
import type { HostedJob, JobCheckpoint, JobEvent, JobRetry } from './fine-tuning.model';
import type {
  FineTuningHyperparametersType,
  FineTuningJobCheckpointType,
  FineTuningJobEventType,
  FineTuningJobGatewayStatusType,
  FineTuningJobType,
} from './fine-tuning.types';

/**
 * OpenAI's hyperparameters object: snake_case, each of the method's present (as OpenAI answers them),
 * "auto" where the provider chooses or has not said (Bedrock's job list has none).
 */
function hyperparametersJson({ type, hyperparameters: h }: JobMethod) {
  const json: Record<string, number | 'auto'> = {
    n_epochs: h.nEpochs ?? 'auto',
    batch_size: h.batchSize ?? 'auto',
    learning_rate_multiplier: h.learningRateMultiplier ?? 'auto',
  };
  if (type === 'dpo' || h.beta !== undefined) json.beta = h.beta ?? 'auto';
  return json;
}

/** OpenAI's `method` object: `{type, <type>: {hyperparameters}}`. */
const methodJson = (m: JobMethod) => ({ type: m.type, [m.type]: { hyperparameters: hyperparametersJson(m) } });

/** What OpenAI's job object is made from: a job with the two fields OpenAI requires that a provider may not know. */
export type JobView = ProviderJob & { organizationId: string; seed: number };

/** A hosted job as the provider-independent view the REST job object is made from (times in Unix seconds). */
export function hostedJobView(job: HostedJob): JobView {
  return {
    id: job.id,
    status: job.status,
    model: job.model,
    fineTunedModel: job.fineTunedModel,
    servingModel: job.servingModel,
    trainedTokens: job.trainedTokens,
    error: job.error,
    createdAt: unixSeconds(job.createdAt),
    finishedAt: unixOrNull(job.finishedAt),
    estimatedFinish: unixOrNull(job.estimatedFinish),
    hyperparameters: job.method.hyperparameters,
    method: job.method,
    resultFiles: job.resultFiles,
    trainingFile: job.trainingFileId,
    validationFile: job.validationFileId,
    seed: job.seed,
    suffix: job.suffix,
    metadata: job.metadata,
    organizationId: job.organisationId,
  };
}

/** The REST job object: OpenAI's `fine_tuning.job` (api.md §5), for hosted jobs and client mode alike. */
export function toJobJson(job: JobView) {
  const method: JobMethod = job.method ?? { type: 'supervised', hyperparameters: job.hyperparameters };
  return {
    id: job.id,
    object: 'fine_tuning.job' as const,
    created_at: job.createdAt,
    // A job's error names a field as the service does (`trainingFile`): REST names it in its own spelling.
    error: job.error && { ...job.error, param: job.error.param === null ? null : restParam(job.error.param) },
    fine_tuned_model: job.fineTunedModel,
    finished_at: job.finishedAt,
    hyperparameters: hyperparametersJson(method),
    model: job.model,
    organization_id: job.organizationId,
    result_files: job.resultFiles,
    status: job.status,
    trained_tokens: job.trainedTokens,
    training_file: job.trainingFile,
    validation_file: job.validationFile,
    seed: job.seed,
    estimated_finish: job.estimatedFinish,
    method: methodJson(method),
    suffix: job.suffix,
    metadata: job.metadata,
  };
}

/**
 * The gateway's extension of OpenAI's job object, on hosted jobs only: null while nothing is amiss;
 * while the job monitor retries a failed step, why, how often, and what happens next.
 */
export function gatewayStatusJson(retry: JobRetry | null) {
  if (!retry) return null;
  const { reason, code, message, status } = retry.lastError;
  return {
    retrying: true as const,
    reason,
    attempts: retry.attempts,
    next_attempt_at: unixSeconds(retry.nextAttemptAt),
    fails_at: unixOrNull(retry.giveUpAt),
    last_error: { code, message, status },
  };
}

export const toHostedJobJson = (job: HostedJob) => ({ ...toJobJson(hostedJobView(job)), gateway_status: gatewayStatusJson(job.retry) });

export const toJobListJson = (page: Page<JobView>) => listJson(page, toJobJson);

export const toHostedJobListJson = (page: Page<HostedJob>) => listJson(page, toHostedJobJson);

/** A stored event as the provider-independent view (the REST event object is made from it). */
export const storedEventView = (event: JobEvent): ProviderEvent => ({ ...event, createdAt: unixSeconds(event.createdAt) });

export function toEventJson(event: ProviderEvent) {
  return {
    id: event.id,
    object: 'fine_tuning.job.event' as const,
    created_at: event.createdAt,
    level: event.level,
    message: event.message,
    type: event.type ?? 'message',
    data: event.data ?? {},
  };
}

export const toEventListJson = (page: Page<ProviderEvent>) => listJson(page, toEventJson);

export const storedCheckpointView = (c: JobCheckpoint): ProviderCheckpoint => ({ ...c, createdAt: unixSeconds(c.createdAt), fineTuningJobId: c.jobId });

export function toCheckpointJson(checkpoint: ProviderCheckpoint) {
  return {
    id: checkpoint.id,
    object: 'fine_tuning.job.checkpoint' as const,
    created_at: checkpoint.createdAt,
    fine_tuned_model_checkpoint: checkpoint.fineTunedModelCheckpoint,
    step_number: checkpoint.stepNumber,
    fine_tuning_job_id: checkpoint.fineTuningJobId,
    metrics: checkpoint.metrics,
  };
}

export const toCheckpointListJson = (page: Page<ProviderCheckpoint>) => cursorListJson(page, toCheckpointJson);

/** GraphQL hyperparameters: numbers, null for "auto". */
export function toHyperparametersType(h: Hyperparameters): FineTuningHyperparametersType {
  const value = (v: number | 'auto' | undefined) => (typeof v === 'number' ? v : null);
  return { nEpochs: value(h.nEpochs), batchSize: value(h.batchSize), learningRateMultiplier: value(h.learningRateMultiplier), beta: value(h.beta) };
}

/** The GraphQL job object. */
export function toJobType(job: HostedJob): FineTuningJobType {
  const hyperparameters = toHyperparametersType(job.method.hyperparameters);
  return {
    id: job.id,
    status: job.status,
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
    method: { type: job.method.type, hyperparameters },
    hyperparameters,
    metadata: job.metadata,
    error: job.error,
    trainedTokens: job.trainedTokens,
    resultFiles: job.resultFiles,
    createdAt: job.createdAt,
    finishedAt: job.finishedAt,
    estimatedFinish: job.estimatedFinish,
    gatewayStatus: toGatewayStatusType(job.retry),
  };
}

function toGatewayStatusType(retry: JobRetry | null): FineTuningJobGatewayStatusType | null {
  if (!retry) return null;
  return {
    retrying: true,
    reason: retry.lastError.reason,
    attempts: retry.attempts,
    nextAttemptAt: retry.nextAttemptAt,
    failsAt: retry.giveUpAt,
    lastError: retry.lastError,
  };
}

export function toEventType(event: JobEvent): FineTuningJobEventType {
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

export function toCheckpointType(c: JobCheckpoint): FineTuningJobCheckpointType {
  return {
    id: c.id,
    fineTuningJobId: c.jobId,
    createdAt: c.createdAt,
    fineTunedModelCheckpoint: c.fineTunedModelCheckpoint,
    stepNumber: c.stepNumber,
    metrics: c.metrics,
  };
}
