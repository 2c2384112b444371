import { cursorListJson, unixSeconds, type Page } from '../../http/openai-shapes';
import type { BatchEvent, GatewayBatch } from './batch.model';
import type { BatchEventType, BatchType } from './batch.types';

/** Unset optional fields are left out: OpenAI's document types them as numbers or strings, never null. */
const present = <K extends string, V>(key: K, value: V | null) => (value === null ? {} : ({ [key]: value } as Record<K, V>));
const seconds = (key: string, date: Date | null) => present(key, date && unixSeconds(date));

/** OpenAI's batch object, plus `gateway`: how the gateway runs it. */
export function toBatchJson(batch: GatewayBatch) {
  const { inputTokens, outputTokens } = batch.usage;
  return {
    id: batch.id,
    object: 'batch' as const,
    endpoint: batch.endpoint,
    model: batch.model,
    ...present('errors', batch.errors && { object: 'list', data: batch.errors }),
    input_file_id: batch.inputFileId,
    completion_window: batch.completionWindow,
    status: batch.status,
    ...present('output_file_id', batch.outputFileId),
    ...present('error_file_id', batch.errorFileId),
    created_at: unixSeconds(batch.createdAt),
    ...seconds('in_progress_at', batch.inProgressAt),
    expires_at: unixSeconds(batch.expiresAt),
    ...seconds('finalizing_at', batch.finalizingAt),
    ...seconds('completed_at', batch.completedAt),
    ...seconds('failed_at', batch.failedAt),
    ...seconds('expired_at', batch.expiredAt),
    ...seconds('cancelling_at', batch.cancellingAt),
    ...seconds('cancelled_at', batch.cancelledAt),
    request_counts: batch.requestCounts,
    usage: {
      input_tokens: inputTokens,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: outputTokens,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: inputTokens + outputTokens,
    },
    metadata: batch.metadata,
    gateway: { runner: batch.runner, provider: batch.provider, integration: `@${batch.integrationSlug}` },
  };
}

/** The list answer of GET /v1/batches. */
export const toBatchListJson = (page: Page<GatewayBatch>) => cursorListJson(page, toBatchJson);

/** The GraphQL batch object. */
export function toBatchType(batch: GatewayBatch): BatchType {
  return {
    id: batch.id,
    organisationId: batch.organisationId,
    workspaceId: batch.workspaceId,
    status: batch.status,
    endpoint: batch.endpoint,
    completionWindow: batch.completionWindow,
    model: batch.model,
    runner: batch.runner,
    provider: batch.provider,
    integration: `@${batch.integrationSlug}`,
    inputFileId: batch.inputFileId,
    outputFileId: batch.outputFileId,
    errorFileId: batch.errorFileId,
    errors: batch.errors ?? [],
    requestCounts: batch.requestCounts,
    inputTokens: batch.usage.inputTokens,
    outputTokens: batch.usage.outputTokens,
    metadata: batch.metadata,
    createdAt: batch.createdAt,
    inProgressAt: batch.inProgressAt,
    expiresAt: batch.expiresAt,
    finalizingAt: batch.finalizingAt,
    completedAt: batch.completedAt,
    failedAt: batch.failedAt,
    expiredAt: batch.expiredAt,
    cancellingAt: batch.cancellingAt,
    cancelledAt: batch.cancelledAt,
  };
}

export const toBatchEventType = (event: BatchEvent): BatchEventType => ({ ...event });
