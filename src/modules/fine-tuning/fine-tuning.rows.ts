/**
 * Database rows ↔ the fine-tuning model. Rows are parsed once, here: enum-like columns checked,
 * JSON columns read with a schema (a row that does not fit is a bug worth failing loudly on, not a
 * value to guess at), BIGINT tokens as numbers. Writes go the other way through {@link toRowUpdate}.
 */
import { z } from 'zod';
import {
  Prisma,
  type FineTuningJob as JobRow,
  type FineTuningJobCheckpoint as CheckpointRow,
  type FineTuningJobEvent as EventRow,
} from '../../generated/prisma/client';
import { JOB_STATUSES, METHOD_TYPES, type JobStatus } from '../../providers/types';
import { PROVIDER_NAMES } from '../../providers/names';
import { isTerminal, RETRY_REASONS, type HostedJob, type JobCheckpoint, type JobError, type JobEvent, type JobRetry } from './fine-tuning.model';

const hyperparameterValue = z.union([z.literal('auto'), z.number()]);
const hyperparametersSchema = z
  .object({ nEpochs: hyperparameterValue, batchSize: hyperparameterValue, learningRateMultiplier: hyperparameterValue, beta: hyperparameterValue })
  .partial();
const methodSchema = z.object({ type: z.enum(METHOD_TYPES), hyperparameters: hyperparametersSchema });
const errorSchema = z.object({ code: z.string(), message: z.string(), param: z.string().nullable() });
const retryErrorSchema = z.object({ reason: z.enum(RETRY_REASONS), code: z.string(), message: z.string(), status: z.number().nullable() });
const stringMap = z.record(z.string());

const jobColumns = z.object({
  status: z.enum(JOB_STATUSES),
  provider: z.enum(PROVIDER_NAMES),
  method: methodSchema.nullable(),
  hyperparameters: hyperparametersSchema,
  metadata: stringMap.nullable(),
  error: errorSchema.nullable(),
  gatewayOptions: stringMap,
  // Checked against the provider's job options when the job is submitted.
  providerOptions: z.record(z.unknown()),
  resultFiles: z.array(z.string()),
  retryError: retryErrorSchema.nullable(),
});

export function toJob(row: JobRow): HostedJob {
  const { method, hyperparameters, retryError, ...columns } = jobColumns.parse(row);
  const { nextPollAt, leaseOwner: _o, leaseExpiresAt: _e, updatedAt: _u, retryError: _r, giveUpAt, trainedTokens, ...rest } = row;
  const retrying = retryError !== null && row.failedAttempts > 0 && !isTerminal(columns.status);
  const retry: JobRetry | null = retrying ? { attempts: row.failedAttempts, nextAttemptAt: nextPollAt, giveUpAt, lastError: retryError } : null;
  return {
    ...rest,
    ...columns,
    // The `method` column keeps the request; the `hyperparameters` column the values in effect (settled by the provider).
    method: { type: method?.type ?? 'supervised', hyperparameters },
    trainedTokens: trainedTokens === null ? null : Number(trainedTokens),
    retry,
  };
}

const eventColumns = z.object({ level: z.enum(['info', 'warn', 'error']), type: z.enum(['message', 'metrics']).nullable() });

export function toEvent(row: EventRow): JobEvent {
  return { id: row.id, jobId: row.jobId, ...eventColumns.parse(row), message: row.message, data: row.data, createdAt: row.createdAt };
}

const metricsSchema = z.record(z.number());

export function toCheckpoint(row: CheckpointRow): JobCheckpoint {
  return {
    id: row.id,
    jobId: row.jobId,
    fineTunedModelCheckpoint: row.fineTunedModelCheckpoint,
    stepNumber: row.stepNumber,
    metrics: metricsSchema.parse(row.metrics),
    createdAt: row.createdAt,
  };
}

/** The columns a change may set; the state machine speaks the model's types, never Prisma's. */
export interface JobUpdate {
  status?: JobStatus;
  fineTunedModel?: string | null;
  servingModel?: string | null;
  trainedTokens?: number | null;
  error?: JobError | null;
  finishedAt?: Date | null;
  estimatedFinish?: Date | null;
  resultFiles?: string[];
  hyperparameters?: HostedJob['method']['hyperparameters'];
  seed?: number;
  providerCancelPending?: boolean;
  nextPollAt?: Date;
}

export function toRowUpdate(update: JobUpdate): Prisma.FineTuningJobUncheckedUpdateManyInput {
  const { trainedTokens, error, ...rest } = update;
  return {
    ...rest,
    ...(trainedTokens !== undefined ? { trainedTokens: trainedTokens === null ? null : BigInt(Math.round(trainedTokens)) } : {}),
    ...(error !== undefined ? { error: error ?? Prisma.DbNull } : {}),
  };
}

/** A JSON column value (Prisma wants DbNull, not null, for SQL NULL). */
export const jsonOrNull = (value: Prisma.InputJsonValue | null) => value ?? Prisma.DbNull;
