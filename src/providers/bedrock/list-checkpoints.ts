/**
 * Bedrock keeps no intermediate checkpoints: a completed job has one model, its custom model. It is
 * the job's one checkpoint, at the last training step, with the final losses Bedrock reports
 * (`trainingMetrics`, `validationMetrics`) and the last perplexity of the metrics CSV.
 */
import type { GetModelCustomizationJobResponse } from '@aws-sdk/client-bedrock';
import type { PageInput, ProviderCheckpoint, ProviderPage } from '../types';
import { jobIdOf } from './artifacts';
import type { BedrockConnection } from './connection';
import { toSeconds } from './files';
import { readJob } from './get-job';
import { readMetrics, type MetricRow } from './metrics';
import { pageOf } from './page';

function finalMetrics(job: GetModelCustomizationJobResponse, last: MetricRow | undefined): Record<string, number> {
  const metrics: Record<string, number> = {};
  const trainLoss = job.trainingMetrics?.trainingLoss ?? last?.loss;
  const validLoss = job.validationMetrics?.[0]?.validationLoss;
  if (trainLoss !== undefined) metrics.train_loss = trainLoss;
  if (last?.perplexity !== undefined) metrics.train_perplexity = last.perplexity;
  if (validLoss !== undefined) metrics.valid_loss = validLoss;
  return metrics;
}

export async function listCheckpoints(conn: BedrockConnection, id: string, page: PageInput): Promise<ProviderPage<ProviderCheckpoint>> {
  const job = await readJob(conn, id);
  if (job.status !== 'Completed' || !job.outputModelArn || !job.jobArn) return pageOf([], page);
  const last = (await readMetrics(conn, job, 'training')).at(-1);
  const checkpoint: ProviderCheckpoint = {
    id: `bedrock-${jobIdOf(job.jobArn)}-model`,
    createdAt: toSeconds(job.endTime),
    fineTunedModelCheckpoint: job.outputModelArn,
    stepNumber: last?.step ?? 0,
    metrics: finalMetrics(job, last),
    fineTuningJobId: job.jobArn,
  };
  return pageOf([checkpoint], page);
}
