/**
 * Bedrock's customization jobs as the internal model. Statuses map as providers.md says:
 * `InProgress` refined by `statusDetails` (validation under way → `validating_files`; data
 * processing, or training not started → `queued`; training → `running`), `Completed` → `succeeded`,
 * `Failed` → `failed`, `Stopping` → still `running`, `Stopped` → `cancelled`. Times are Unix seconds;
 * the result model is `outputModelArn`; hyperparameters come back from Bedrock's strings.
 */
import type { GetModelCustomizationJobResponse, ModelCustomizationJobSummary, StatusDetails } from '@aws-sdk/client-bedrock';
import type { Hyperparameters, JobStatus, ProviderJob } from '../types';
import { metricsLocation, type MetricsKind } from './artifacts';
import { toSeconds } from './files';
import { modelIdOf } from './models';
import { s3Uri } from './s3-uri';

/** What the gateway reads of a job: the full GetModelCustomizationJob answer, or what a list summary has of it. */
export type BedrockJob = Partial<GetModelCustomizationJobResponse>;

const TERMINAL: Readonly<Record<string, JobStatus>> = { Completed: 'succeeded', Failed: 'failed', Stopped: 'cancelled' };

function inProgress(details: StatusDetails | undefined): JobStatus {
  const validation = details?.validationDetails?.status;
  const training = details?.trainingDetails?.status;
  if (training === 'InProgress' || training === 'Completed') return 'running';
  if (validation === 'InProgress' || validation === 'NotStarted') return 'validating_files';
  if (details?.dataProcessingDetails?.status || training) return 'queued';
  return 'running';
}

export const statusOf = (job: Pick<BedrockJob, 'status' | 'statusDetails'>): JobStatus =>
  (job.status && TERMINAL[job.status]) || (job.status === 'Stopping' ? 'running' : inProgress(job.statusDetails));

const number = (value: string | undefined) => (value !== undefined && value.trim() !== '' && Number.isFinite(Number(value)) ? Number(value) : undefined);

/** Bedrock's hyperparameters (strings) under OpenAI's names; an absolute `learningRate` has none and stays out. */
export function toHyperparameters(h: Record<string, string> | undefined): Hyperparameters {
  const out: Hyperparameters = {};
  const epochs = number(h?.epochCount);
  const batch = number(h?.batchSize);
  const multiplier = number(h?.learningRateMultiplier);
  if (epochs !== undefined) out.nEpochs = epochs;
  if (batch !== undefined) out.batchSize = batch;
  if (multiplier !== undefined) out.learningRateMultiplier = multiplier;
  return out;
}

/** A completed job's result files: its metrics CSVs, readable as files in client mode when in the configured bucket. */
function resultFiles(job: BedrockJob): string[] {
  if (job.status !== 'Completed') return [];
  const kinds: MetricsKind[] = job.validationDataConfig?.validators?.length ? ['training', 'validation'] : ['training'];
  return kinds.flatMap((kind) => {
    const location = metricsLocation(job.outputDataConfig?.s3Uri, job.jobArn ?? '', kind);
    return location ? [s3Uri(location)] : [];
  });
}

/** The AWS account a job belongs to: the fifth field of its ARN (`arn:aws:bedrock:<region>:<account>:…`). */
export const accountOf = (arn: string | undefined): string | null => /^arn:[^:]+:[^:]+:[^:]*:(\d{12}):/.exec(arn ?? '')?.[1] ?? null;

export function toJob(job: BedrockJob): ProviderJob {
  const status = statusOf(job);
  const hyperparameters = toHyperparameters(job.hyperParameters);
  const failed = job.status === 'Failed';
  return {
    id: job.jobArn ?? '',
    status,
    model: modelIdOf(job.baseModelArn ?? ''),
    fineTunedModel: job.outputModelArn ?? null,
    servingModel: null,
    trainedTokens: null,
    error: failed ? { code: 'model_customization_failed', message: job.failureMessage ?? 'The model customization job failed', param: null } : null,
    createdAt: toSeconds(job.creationTime),
    finishedAt: job.status && TERMINAL[job.status] ? toSeconds(job.endTime ?? job.lastModifiedTime) : null,
    estimatedFinish: null,
    hyperparameters,
    method: { type: 'supervised', hyperparameters },
    resultFiles: resultFiles(job),
    // A list summary has no data configuration: its training file reads ''.
    trainingFile: job.trainingDataConfig?.s3Uri ?? '',
    validationFile: job.validationDataConfig?.validators?.[0]?.s3Uri ?? null,
    // Bedrock takes no seed.
    seed: null,
    suffix: job.outputModelName ?? null,
    metadata: null,
    organizationId: accountOf(job.jobArn),
  };
}

/** A list entry: the summary's fields under the names GetModelCustomizationJob uses. */
export const fromSummary = ({ customModelArn, customModelName, ...summary }: ModelCustomizationJobSummary): BedrockJob => ({
  ...summary,
  outputModelArn: customModelArn,
  outputModelName: customModelName,
});
