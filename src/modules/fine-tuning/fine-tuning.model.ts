/**
 * The fine-tuning domain's own model, camelCase and typed: what services, the state machine, the job
 * monitor and both faces see. The repository parses database rows into it once (JSON columns
 * included); provider adapters translate their wire formats into it.
 */
import type { EventLevel, JobError, JobMethod, JobStatus, ProviderName, JobOptionValues } from '../../providers/types';

export type { EventLevel, Hyperparameters, JobError, JobMethod, JobStatus, MethodType } from '../../providers/types';

export const TERMINAL_STATUSES = ['succeeded', 'failed', 'cancelled'] as const satisfies readonly JobStatus[];
const TERMINAL: ReadonlySet<JobStatus> = new Set<JobStatus>(TERMINAL_STATUSES);

/** Finished: nothing moves a job in these states any more (the monitor never claims them again). */
export const isTerminal = (status: JobStatus) => TERMINAL.has(status);

export type EventType = 'message' | 'metrics';

/** A hosted (provider-mode) fine-tuning job. */
export interface HostedJob {
  id: string;
  organisationId: string;
  workspaceId: string;
  status: JobStatus;
  /** The model as the caller named it; `providerModel` (provider_options.model) is what the provider gets when set. */
  model: string;
  providerModel: string | null;
  provider: ProviderName;
  /** The integration whose credentials the monitor uses (slug, without `@`). */
  integrationSlug: string;
  trainingFileId: string;
  validationFileId: string | null;
  suffix: string | null;
  seed: number;
  method: JobMethod;
  /** The caller used the legacy top-level `hyperparameters` instead of `method`. */
  legacyHyperparameters: boolean;
  metadata: Record<string, string> | null;
  /** Non-secret provider settings from `gateway_options` (header names as keys). */
  gatewayOptions: Record<string, string>;
  /** `provider_options` without `model` (e.g. `roleArn`, `jobName`). */
  providerOptions: JobOptionValues;
  providerTrainingFileId: string | null;
  providerValidationFileId: string | null;
  providerJobId: string | null;
  submitAttempts: number;
  fineTunedModel: string | null;
  /** What chat completions call for the result when it is not `fineTunedModel` (see ProviderJob). */
  servingModel: string | null;
  trainedTokens: number | null;
  error: JobError | null;
  resultFiles: string[];
  estimatedFinish: Date | null;
  finishedAt: Date | null;
  providerCancelPending: boolean;
  idlePolls: number;
  failedAttempts: number;
  /** What the monitor is retrying, while it is (the answers' `gateway_status`); null otherwise. */
  retry: JobRetry | null;
  createdAt: Date;
}

/**
 * Why a step of the monitor failed and will be retried: the provider could not be reached (refused
 * connection, DNS failure, time-out), answered 5xx, or 429; or the gateway itself failed.
 */
export const RETRY_REASONS = ['provider_unreachable', 'provider_unavailable', 'provider_rate_limited', 'gateway_error'] as const;
export type RetryReason = (typeof RETRY_REASONS)[number];

/** The last failure of a step that will be retried. */
export interface RetryError {
  reason: RetryReason;
  code: string;
  message: string;
  /** The HTTP status the provider call ended with (null for the gateway's own failures). */
  status: number | null;
}

/** A job whose monitor steps fail and are retried with back-off. */
export interface JobRetry {
  /** Failed steps in a row. */
  attempts: number;
  nextAttemptAt: Date;
  /** When a job not yet submitted fails as `provider_unreachable` if it still cannot be; null once submitted (then followed until it ends). */
  giveUpAt: Date | null;
  lastError: RetryError;
}

export interface JobEvent {
  id: string;
  jobId: string;
  level: EventLevel;
  message: string;
  type: EventType | null;
  data: unknown;
  createdAt: Date;
}

export interface JobCheckpoint {
  id: string;
  jobId: string;
  fineTunedModelCheckpoint: string;
  stepNumber: number;
  metrics: Record<string, number>;
  createdAt: Date;
}

export interface Page<T> {
  items: T[];
  hasMore: boolean;
}
