/**
 * The usage reads: OpenAI's Usage API (token sums per time bucket and group), its Costs API (those
 * sums priced from the configured table) and the request log. A workspace key sees its workspace's
 * calls, an organisation key its whole organisation's (narrowed by `project_ids`).
 */
import { type Caller } from '../../auth/scope';
import { invalidField } from '../../errors';
import { parseInput, type Input } from '../../validation/parse';
import type { PriceTable } from './prices';
import type { AggregateRow, GroupColumn, LogRow, UsageRepository, UsageScope } from './usage.repository';
import {
  BUCKET_LIMITS,
  BUCKET_SECONDS,
  costQuerySchema,
  logQuerySchema,
  usageQuerySchema,
  type CostGroup,
  type CostQueryInput,
  type LogQueryInput,
  type UsageGroup,
  type UsageQueryInput,
} from './usage.schemas';

export interface Bucket<R> {
  startTime: number;
  endTime: number;
  results: R[];
}

export interface BucketPage<R> {
  buckets: Bucket<R>[];
  hasMore: boolean;
  nextPage: string | null;
}

/** One group's sums in one bucket; a field is null when the usage is not grouped by it. */
export interface UsageResult {
  inputTokens: number;
  cachedTokens: number;
  outputTokens: number;
  requests: number;
  model: string | null;
  apiKeyId: string | null;
  projectId: string | null;
  batch: boolean | null;
}

/** One group's cost in one bucket; `amount` is null when the tokens have no price (`lineItem` then names the model). */
export interface CostResult {
  amount: { value: number; currency: string } | null;
  lineItem: string | null;
  projectId: string | null;
  apiKeyId: string | null;
  /** Tokens, when grouped by line item or unpriced. */
  quantity: number | null;
}

export interface LogPage {
  entries: LogRow[];
  hasMore: boolean;
}

/** The buckets one page covers. */
interface PageWindow {
  origin: number;
  width: number;
  /** Unix seconds, exclusive. */
  end: number;
  first: number;
  count: number;
  hasMore: boolean;
}

const PAGE = /^page_(\d{1,12})$/;

export class UsageService {
  constructor(
    private readonly repository: UsageRepository,
    private readonly prices: PriceTable | null,
    private readonly now: () => number = Date.now,
  ) {}

  /** `/v1/organization/usage/completions`: chat calls' tokens per bucket and group. */
  async completions(caller: Caller, input: Input<UsageQueryInput>): Promise<BucketPage<UsageResult>> {
    const query = parseInput(usageQuerySchema, input);
    const window = this.window(query, BUCKET_SECONDS[query.bucketWidth], BUCKET_LIMITS[query.bucketWidth]);
    const rows = await this.repository.aggregate(scopeOf(caller), {
      ...range(window),
      groupBy: query.groupBy,
      operation: 'chat',
      projectIds: query.projectIds,
      apiKeyIds: query.apiKeyIds,
      models: query.models,
      batch: query.batch,
    });
    return paged(window, rows, (row) => toUsageResult(row, query.groupBy));
  }

  /** `/v1/organization/costs`: the same sums (chat and fine-tuning) priced per model; unpriced tokens stay unpriced. */
  async costs(caller: Caller, input: Input<CostQueryInput>): Promise<BucketPage<CostResult>> {
    const query = parseInput(costQuerySchema, input);
    const window = this.window(query, BUCKET_SECONDS['1d'], { default: 7, max: 180 });
    const groupBy: GroupColumn[] = ['model', 'operation', 'batch', ...query.groupBy.filter((g): g is 'project_id' | 'api_key_id' => g !== 'line_item')];
    const rows = await this.repository.aggregate(scopeOf(caller), { ...range(window), groupBy, projectIds: query.projectIds, apiKeyIds: query.apiKeyIds });
    const page = paged(window, rows, (row) => row);
    return { ...page, buckets: page.buckets.map((b) => ({ ...b, results: priced(b.results, query.groupBy, this.prices) })) };
  }

  /** `/v1/logs`: the calls, newest first, without any body. */
  async log(caller: Caller, input: Input<LogQueryInput>): Promise<LogPage> {
    const query = parseInput(logQuerySchema, input);
    const rows = await this.repository.log(scopeOf(caller), {
      model: query.model,
      status: query.status,
      apiKeyId: query.apiKeyId,
      from: query.startTime === undefined ? undefined : new Date(query.startTime * 1000),
      to: query.endTime === undefined ? undefined : new Date(query.endTime * 1000),
      before: query.after === undefined ? undefined : BigInt(query.after),
      take: query.limit,
    });
    return { entries: rows.slice(0, query.limit), hasMore: rows.length > query.limit };
  }

  /** The buckets of the requested range that this page covers (`page` is where the previous one stopped). */
  private window(
    query: { startTime: number; endTime?: number; page?: string; limit?: number },
    width: number,
    limits: { default: number; max: number },
  ): PageWindow {
    const end = query.endTime ?? Math.ceil(this.now() / 1000);
    if (end <= query.startTime) throw invalidField('endTime', 'must be after start_time');
    const limit = query.limit ?? limits.default;
    if (limit > limits.max) throw invalidField('limit', `must be at most ${limits.max} for this bucket width`);
    const total = Math.ceil((end - query.startTime) / width);
    const first = query.page === undefined ? 0 : pageIndex(query.page, query.startTime, width, total);
    const count = Math.min(limit, total - first);
    return { origin: query.startTime, width, end, first, count, hasMore: first + count < total };
  }
}

/** Organisation keys read their organisation; workspace keys their workspace. */
const scopeOf = (caller: Caller): UsageScope => ({ organisationId: caller.organisationId, workspaceId: caller.workspaceId });

const range = (w: PageWindow) => ({
  origin: w.origin,
  width: w.width,
  from: new Date((w.origin + w.first * w.width) * 1000),
  to: new Date(Math.min(w.origin + (w.first + w.count) * w.width, w.end) * 1000),
});

/** The bucket index a `page` cursor points at, checked to be one of the range's. */
function pageIndex(page: string, origin: number, width: number, total: number): number {
  const start = Number(PAGE.exec(page)?.[1] ?? NaN);
  const index = (start - origin) / width;
  if (!Number.isInteger(index) || index < 0 || index >= total) throw invalidField('page', 'is not a next_page of this query');
  return index;
}

/** Every bucket of the window (empty ones too, as OpenAI answers), each with its rows. */
function paged<R>(w: PageWindow, rows: AggregateRow[], toResult: (row: AggregateRow) => R): BucketPage<R> {
  const buckets: Bucket<R>[] = [];
  for (let i = w.first; i < w.first + w.count; i++) {
    const startTime = w.origin + i * w.width;
    buckets.push({ startTime, endTime: Math.min(startTime + w.width, w.end), results: rows.filter((r) => r.bucket === i).map(toResult) });
  }
  const next = w.origin + (w.first + w.count) * w.width;
  return { buckets, hasMore: w.hasMore, nextPage: w.hasMore ? `page_${next}` : null };
}

const grouped = <T>(groupBy: readonly string[], name: string, value: T | undefined): T | null => (groupBy.includes(name) ? (value ?? null) : null);

function toUsageResult(row: AggregateRow, groupBy: readonly UsageGroup[]): UsageResult {
  return {
    inputTokens: row.inputTokens,
    cachedTokens: row.cachedTokens,
    outputTokens: row.outputTokens,
    requests: row.requests,
    model: grouped(groupBy, 'model', row.model),
    apiKeyId: grouped(groupBy, 'api_key_id', row.api_key_id),
    projectId: grouped(groupBy, 'project_id', row.project_id),
    batch: grouped(groupBy, 'batch', row.batch),
  };
}

/** A row's tokens by line item, each with its price per token (undefined: unknown). */
function lineItems(row: AggregateRow, prices: PriceTable | null): { item: string; tokens: number; perToken: number | undefined }[] {
  const p = prices?.of(row.model ?? '');
  const discount = row.batch && p ? 1 - p.batchDiscount : 1;
  if (row.operation === 'fine_tuning') return [{ item: 'training', tokens: row.inputTokens, perToken: p?.training ?? undefined }];
  return [
    { item: 'input', tokens: row.inputTokens - row.cachedTokens, perToken: p && p.input * discount },
    { item: 'cached input', tokens: row.cachedTokens, perToken: p && p.cachedInput * discount },
    { item: 'output', tokens: row.outputTokens, perToken: p && p.output * discount },
  ];
}

/**
 * One bucket's rows as cost results: priced tokens summed per requested group (and line item when
 * asked), unpriced tokens as results of their own without an amount, naming model and line item.
 */
function priced(rows: AggregateRow[], groupBy: readonly CostGroup[], prices: PriceTable | null): CostResult[] {
  const results = new Map<string, CostResult>();
  const currency = prices?.currency ?? 'usd';
  for (const row of rows) {
    const projectId = grouped(groupBy, 'project_id', row.project_id);
    const apiKeyId = grouped(groupBy, 'api_key_id', row.api_key_id);
    for (const { item, tokens, perToken } of lineItems(row, prices)) {
      if (tokens <= 0) continue;
      const known = perToken !== undefined;
      const lineItem = known ? (groupBy.includes('line_item') ? `${row.model}, ${item}` : null) : `${row.model}, ${item}`;
      const key = JSON.stringify([known, lineItem, projectId, apiKeyId]);
      const result = results.get(key) ?? {
        amount: known ? { value: 0, currency } : null,
        lineItem,
        projectId,
        apiKeyId,
        quantity: lineItem === null ? null : 0,
      };
      if (result.amount && known) result.amount.value += tokens * perToken;
      if (result.quantity !== null) result.quantity += tokens;
      results.set(key, result);
    }
  }
  return [...results.values()];
}
