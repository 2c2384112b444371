/**
 * Bedrock has no job events: they are made from the job, the way OpenAI words its own — its creation,
 * each step of `statusDetails` (validation, data processing, training) starting and ending, a stop
 * requested, the outcome, and, once it completed, one `metrics` event per training step from its
 * metrics CSVs. Ids are derived from the job and what happened, never from when they were read, so
 * the same event keeps its id on every call (the job monitor stores each once).
 */
import type { GetModelCustomizationJobResponse, StatusDetails } from '@aws-sdk/client-bedrock';
import type { EventLevel, PageInput, ProviderEvent, ProviderPage } from '../types';
import { jobIdOf } from './artifacts';
import type { BedrockConnection } from './connection';
import { toSeconds } from './files';
import { readJob } from './get-job';
import { readMetrics, type MetricRow } from './metrics';
import { pageOf } from './page';

const STEPS: ReadonlyArray<[key: keyof StatusDetails, slug: string, label: string]> = [
  ['validationDetails', 'validation', 'Validation of the training data'],
  ['dataProcessingDetails', 'data-processing', 'Data processing'],
  ['trainingDetails', 'training', 'Training'],
];

const STEP_ENDINGS: Readonly<Record<string, [word: string, level: EventLevel]>> = {
  Completed: ['completed', 'info'],
  Failed: ['failed', 'error'],
  Stopped: ['stopped', 'warn'],
};

type Make = (
  what: string,
  at: Date | undefined,
  level: EventLevel,
  message: string,
  data?: Record<string, unknown>,
  type?: ProviderEvent['type'],
) => ProviderEvent;

/** Events of one job: their ids are the job's id and what happened. */
function eventMaker(job: GetModelCustomizationJobResponse): Make {
  const prefix = `bedrock-${jobIdOf(job.jobArn ?? '')}`;
  return (what, at, level, message, data = {}, type = 'message') => ({ id: `${prefix}-${what}`, createdAt: toSeconds(at), level, message, type, data });
}

/** The events of one step: started, and how it ended (a step still running has only the first). */
function stepEvents(make: Make, details: StatusDetails | undefined, step: (typeof STEPS)[number]): ProviderEvent[] {
  const [key, slug, label] = step;
  const d = details?.[key];
  if (!d?.status || d.status === 'NotStarted') return [];
  const started = make(`${slug}-started`, d.creationTime, 'info', `${label} started`, { step: slug, status: 'InProgress' });
  const ending = STEP_ENDINGS[d.status];
  if (!ending) return [started];
  return [started, make(`${slug}-${ending[0]}`, d.lastModifiedTime, ending[1], `${label} ${ending[0]}`, { step: slug, status: d.status })];
}

/** The training loss of each step, with the validation loss where validation ran at that step. */
function metricsEvents(make: Make, job: GetModelCustomizationJobResponse, training: MetricRow[], validation: MetricRow[]): ProviderEvent[] {
  // The CSVs carry no times: the steps are dated when training ended.
  const at = job.statusDetails?.trainingDetails?.lastModifiedTime ?? job.endTime;
  const validated = new Map(validation.map((row) => [row.step, row]));
  return training.map((row) => {
    const valid = validated.get(row.step);
    const data = {
      step: row.step,
      epoch: row.epoch,
      train_loss: row.loss,
      ...(row.perplexity !== undefined ? { train_perplexity: row.perplexity } : {}),
      ...(valid ? { valid_loss: valid.loss, ...(valid.perplexity !== undefined ? { valid_perplexity: valid.perplexity } : {}) } : {}),
    };
    return make(`step-${row.step}`, at, 'info', `Step ${row.step}: training loss=${row.loss}`, data, 'metrics');
  });
}

function outcomeEvents(make: Make, job: GetModelCustomizationJobResponse): ProviderEvent[] {
  switch (job.status) {
    case 'Stopping':
      return [make('stopping', job.lastModifiedTime, 'info', 'Stopping the job')];
    case 'Stopped':
      return [make('stopped', job.endTime, 'info', 'The job was stopped', { status: 'Stopped' })];
    case 'Failed':
      return [make('failed', job.endTime, 'error', `The job failed: ${job.failureMessage ?? 'no reason given'}`, { status: 'Failed' })];
    case 'Completed':
      return [
        make('succeeded', job.endTime, 'info', `The job has successfully completed: ${job.outputModelArn ?? ''}`, {
          status: 'Completed',
          custom_model_arn: job.outputModelArn,
        }),
      ];
    default:
      return [];
  }
}

/** Every event of the job, oldest first (the order things happen in Bedrock's job lifecycle). */
export function jobEvents(job: GetModelCustomizationJobResponse, training: MetricRow[] = [], validation: MetricRow[] = []): ProviderEvent[] {
  const make = eventMaker(job);
  const created = make('created', job.creationTime, 'info', `Created model customization job ${job.jobName ?? ''} for ${job.baseModelArn ?? 'its base model'}`);
  const [validating, processing, trained] = STEPS.map((step) => stepEvents(make, job.statusDetails, step));
  const metrics = metricsEvents(make, job, training, validation);
  return [created, ...validating, ...processing, ...trained.slice(0, 1), ...metrics, ...trained.slice(1), ...outcomeEvents(make, job)];
}

export async function listEvents(conn: BedrockConnection, id: string, page: PageInput): Promise<ProviderPage<ProviderEvent>> {
  const job = await readJob(conn, id);
  const [training, validation] = await Promise.all([readMetrics(conn, job, 'training'), readMetrics(conn, job, 'validation')]);
  return pageOf(jobEvents(job, training, validation).reverse(), page);
}
