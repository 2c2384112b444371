import type { Batch as BatchRow, BatchEvent as BatchEventRow } from '../../generated/prisma/client';
import type { BatchRunnerName } from './batch.schemas';

/** OpenAI's eight batch statuses, the only ones a batch ever shows. */
export const BATCH_STATUSES = ['validating', 'failed', 'in_progress', 'finalizing', 'completed', 'expired', 'cancelling', 'cancelled'] as const;
export type BatchStatus = (typeof BATCH_STATUSES)[number];

const TERMINAL: ReadonlySet<BatchStatus> = new Set(['failed', 'completed', 'expired', 'cancelled']);
export const isFinished = (status: BatchStatus) => TERMINAL.has(status);

/** A problem that failed the batch while it was validated (OpenAI's `BatchError`). */
export interface BatchError {
  code: string;
  message: string;
  param: string | null;
  line: number | null;
}

/** The gateway's batch model (camelCase; each face converts). */
export interface GatewayBatch {
  id: string;
  organisationId: string;
  workspaceId: string;
  status: BatchStatus;
  endpoint: string;
  completionWindow: string;
  inputFileId: string;
  outputFileId: string | null;
  errorFileId: string | null;
  model: string;
  runner: BatchRunnerName;
  provider: string;
  integrationSlug: string;
  /** Settings every line is sent with, by header name. */
  gatewayOptions: Record<string, string>;
  metadata: Record<string, string> | null;
  /** The key that created it (its requests are metered under it); null for batches created before keys were recorded. */
  apiKeyId: string | null;
  errors: BatchError[] | null;
  requestCounts: { total: number; completed: number; failed: number };
  usage: { inputTokens: number; outputTokens: number };
  createdAt: Date;
  inProgressAt: Date | null;
  expiresAt: Date;
  finalizingAt: Date | null;
  completedAt: Date | null;
  failedAt: Date | null;
  expiredAt: Date | null;
  cancellingAt: Date | null;
  cancelledAt: Date | null;
  /** Provider runner: the provider's input reference and job handle once they exist, and the create calls begun. */
  remote: { inputFile: string | null; batchId: string | null; submitAttempts: number };
}

export interface BatchEvent {
  id: string;
  level: 'info' | 'warn' | 'error';
  message: string;
  data: Record<string, unknown> | null;
  createdAt: Date;
}

/** The column each status stamps when a batch enters it. */
export const STATUS_TIME = {
  in_progress: 'inProgressAt',
  finalizing: 'finalizingAt',
  completed: 'completedAt',
  failed: 'failedAt',
  expired: 'expiredAt',
  cancelling: 'cancellingAt',
  cancelled: 'cancelledAt',
} as const satisfies Partial<Record<BatchStatus, keyof GatewayBatch>>;

export function toBatch(row: BatchRow): GatewayBatch {
  return {
    id: row.id,
    organisationId: row.organisationId,
    workspaceId: row.workspaceId,
    status: row.status as BatchStatus,
    endpoint: row.endpoint,
    completionWindow: row.completionWindow,
    inputFileId: row.inputFileId,
    outputFileId: row.outputFileId,
    errorFileId: row.errorFileId,
    model: row.model,
    runner: row.runner as BatchRunnerName,
    provider: row.provider,
    integrationSlug: row.integrationSlug,
    gatewayOptions: row.gatewayOptions as Record<string, string>,
    metadata: row.metadata as Record<string, string> | null,
    apiKeyId: row.apiKeyId,
    errors: row.errors as BatchError[] | null,
    requestCounts: { total: row.requestTotal, completed: row.requestCompleted, failed: row.requestFailed },
    usage: { inputTokens: Number(row.inputTokens), outputTokens: Number(row.outputTokens) },
    createdAt: row.createdAt,
    inProgressAt: row.inProgressAt,
    expiresAt: row.expiresAt,
    finalizingAt: row.finalizingAt,
    completedAt: row.completedAt,
    failedAt: row.failedAt,
    expiredAt: row.expiredAt,
    cancellingAt: row.cancellingAt,
    cancelledAt: row.cancelledAt,
    remote: { inputFile: row.providerInputFile, batchId: row.providerBatchId, submitAttempts: row.submitAttempts },
  };
}

export const toBatchEvent = (row: BatchEventRow): BatchEvent => ({
  id: row.id,
  level: row.level as BatchEvent['level'],
  message: row.message,
  data: row.data as Record<string, unknown> | null,
  createdAt: row.createdAt,
});
