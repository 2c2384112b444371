/**
 * Where a finished customization job leaves its metrics: under its output S3 location, in
 * `model-customization-job-<id>/` (Bedrock user guide, "Analyze the results of a model customization
 * job"): the step-wise training metrics, and the validation metrics when it had validation data.
 */
import { BUCKET_PATTERN, OBJECT_KEY_PATTERN } from './settings';
import type { S3Location } from './s3-uri';

export type MetricsKind = 'training' | 'validation';

const METRICS_FILES: Readonly<Record<MetricsKind, string>> = {
  training: 'training_artifacts/step_wise_training_metrics.csv',
  validation: 'validation_artifacts/post_fine_tuning_validation/validation_metrics.csv',
};

/** The id at the end of a job ARN (`…:model-customization-job/<base model>/<id>`). */
export const jobIdOf = (jobArn: string) => jobArn.slice(jobArn.lastIndexOf('/') + 1);

/** The metrics CSV of a job, or undefined when its output location is not one the gateway may read. */
export function metricsLocation(outputUri: string | undefined, jobArn: string, kind: MetricsKind): S3Location | undefined {
  const match = outputUri ? /^s3:\/\/([^/]+)\/?(.*)$/.exec(outputUri) : null;
  if (!match || !BUCKET_PATTERN.test(match[1])) return undefined;
  const folder = match[2].replace(/\/$/, '');
  const key = `${folder ? `${folder}/` : ''}model-customization-job-${jobIdOf(jobArn)}/${METRICS_FILES[kind]}`;
  return OBJECT_KEY_PATTERN.test(key) ? { bucket: match[1], key } : undefined;
}
