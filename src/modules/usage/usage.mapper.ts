/** The usage reads in OpenAI's wire shapes (UsageResponse with completions or costs results) and the log's entries. */
import { unixSeconds } from '../../http/openai-shapes';
import type { LogRow } from './usage.repository';
import type { BucketPage, CostResult, LogPage, UsageResult } from './usage.service';

const pageJson = <R, J>(page: BucketPage<R>, toJson: (result: R) => J) => ({
  object: 'page' as const,
  data: page.buckets.map((b) => ({ object: 'bucket' as const, start_time: b.startTime, end_time: b.endTime, results: b.results.map(toJson) })),
  has_more: page.hasMore,
  next_page: page.nextPage,
});

const usageResultJson = (r: UsageResult) => ({
  object: 'organization.usage.completions.result' as const,
  input_tokens: r.inputTokens,
  input_cached_tokens: r.cachedTokens,
  input_uncached_tokens: r.inputTokens - r.cachedTokens,
  output_tokens: r.outputTokens,
  input_audio_tokens: 0,
  output_audio_tokens: 0,
  num_model_requests: r.requests,
  project_id: r.projectId,
  user_id: null,
  api_key_id: r.apiKeyId,
  model: r.model,
  batch: r.batch,
  service_tier: null,
});

/** An unpriced result has no `amount` (OpenAI's is optional): unknown, not 0. */
const costResultJson = (r: CostResult) => ({
  object: 'organization.costs.result' as const,
  ...(r.amount ? { amount: { value: Number(r.amount.value.toFixed(10)), currency: r.amount.currency } } : {}),
  line_item: r.lineItem,
  project_id: r.projectId,
  api_key_id: r.apiKeyId,
  quantity: r.quantity,
  quantity_unit: r.quantity === null ? null : ('tokens' as const),
});

export const toUsagePageJson = (page: BucketPage<UsageResult>) => pageJson(page, usageResultJson);
export const toCostPageJson = (page: BucketPage<CostResult>) => pageJson(page, costResultJson);

export const toLogEntryJson = (row: LogRow) => ({
  id: String(row.id),
  object: 'gateway.log_entry' as const,
  created_at: unixSeconds(row.time),
  operation: row.operation,
  status: row.status,
  provider: row.provider,
  integration: row.integration,
  model: row.model,
  base_model: row.baseModel,
  mode: row.mode,
  streamed: row.streamed,
  input_tokens: row.inputTokens,
  cached_tokens: row.cachedTokens,
  output_tokens: row.outputTokens,
  latency_ms: row.latencyMs,
  ttft_ms: row.ttftMs,
  api_key_id: row.apiKeyId,
  workspace_id: row.workspaceId,
  provider_request_id: row.requestId,
});

export const toLogPageJson = (page: LogPage) => {
  const data = page.entries.map(toLogEntryJson);
  return { object: 'list' as const, data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: page.hasMore };
};
