/**
 * The metrics CSVs a completed job writes under its output location (`step_number, epoch_number,
 * training_loss|validation_loss, perplexity`), read from S3. They are extras: a job whose CSVs are
 * missing or unreadable with the caller's credentials (404, 403) simply has no step-wise metrics.
 */
import type { GetModelCustomizationJobResponse } from '@aws-sdk/client-bedrock';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { GatewayError } from '../../errors';
import { metricsLocation, type MetricsKind } from './artifacts';
import type { BedrockConnection } from './connection';

export interface MetricRow {
  step: number;
  epoch: number;
  loss: number;
  perplexity: number | undefined;
}

/** Metrics files are a few KB per thousand steps; anything far larger is not one. */
const MAX_CSV_BYTES = 16 * 1024 * 1024;

function parseCsv(text: string, lossColumn: string): MetricRow[] {
  const [header, ...lines] = text.split(/\r?\n/).filter((line) => line.trim() !== '');
  const columns = (header ?? '').split(',').map((c) => c.trim());
  const index = (name: string) => columns.indexOf(name);
  const [step, epoch, loss, perplexity] = ['step_number', 'epoch_number', lossColumn, 'perplexity'].map(index);
  if (step < 0 || loss < 0) return [];
  return lines.flatMap((line) => {
    const cells = line.split(',').map((c) => Number(c.trim()));
    const row = { step: cells[step], epoch: epoch < 0 ? 0 : cells[epoch], loss: cells[loss], perplexity: perplexity < 0 ? undefined : cells[perplexity] };
    return Number.isInteger(row.step) && Number.isFinite(row.loss) ? [row] : [];
  });
}

/** A completed job's step-wise metrics of one kind, in step order ([] when there are none to read). */
export async function readMetrics(conn: BedrockConnection, job: GetModelCustomizationJobResponse, kind: MetricsKind): Promise<MetricRow[]> {
  const location = job.status === 'Completed' && job.jobArn ? metricsLocation(job.outputDataConfig?.s3Uri, job.jobArn, kind) : undefined;
  if (!location) return [];
  try {
    const got = await conn.call('Amazon S3', () => conn.s3().send(new GetObjectCommand({ Bucket: location.bucket, Key: location.key })));
    if (!got.Body || (got.ContentLength ?? 0) > MAX_CSV_BYTES) return [];
    return parseCsv(await got.Body.transformToString('utf8'), kind === 'training' ? 'training_loss' : 'validation_loss');
  } catch (err) {
    if (err instanceof GatewayError && (err.status === 404 || err.status === 403)) return [];
    throw err;
  }
}
