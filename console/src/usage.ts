/**
 * The Usage page's arithmetic (no DOM): OpenAI-shaped usage and cost buckets turned into one row per
 * group (model, API key or workspace) and one series per group over the days, for the chart and the
 * table. Costs the price table does not know stay unknown: never counted as 0.
 */

/** The groupings the page offers, as the usage API names them (`project_id` is the workspace). */
export type UsageGrouping = 'model' | 'api_key_id' | 'project_id';

/** The costs API groups by line item ("<model>, <item>") for a per-model view; the others keep their name. */
export const COST_GROUPING: Record<UsageGrouping, string> = { model: 'line_item', api_key_id: 'api_key_id', project_id: 'project_id' };

export interface UsageResultJson {
  input_tokens: number;
  input_cached_tokens: number;
  output_tokens: number;
  num_model_requests: number;
  model: string | null;
  api_key_id: string | null;
  project_id: string | null;
}

export interface CostResultJson {
  amount?: { value: number; currency: string };
  line_item: string | null;
  project_id: string | null;
  api_key_id: string | null;
}

export interface BucketJson<R> {
  start_time: number;
  end_time: number;
  results: R[];
}

export interface GroupTotals {
  /** The group's value (a model, a key id, a workspace id); null for calls without one (the job monitor's). */
  key: string | null;
  inputTokens: number;
  cachedTokens: number;
  outputTokens: number;
  requests: number;
  /** What the priced tokens cost; null when none of the group's tokens has a price. */
  cost: number | null;
  /** Some of the group's tokens have no price: the cost shown is a lower bound. */
  costUnknown: boolean;
}

export interface GroupSeries {
  key: string | null;
  /** Input + output tokens per bucket. */
  tokens: number[];
  requests: number[];
  /** Priced cost per bucket (unknown prices left out). */
  cost: number[];
}

export interface UsageView {
  /** Bucket start times, Unix seconds. */
  times: number[];
  /** Groups, most tokens first. */
  groups: GroupTotals[];
  series: GroupSeries[];
  currency: string;
}

/** The group a cost result belongs to: its model is the line item up to the last comma. */
export function costGroupOf(grouping: UsageGrouping, result: CostResultJson): string | null {
  if (grouping !== 'model') return result[grouping];
  const item = result.line_item;
  if (item === null) return null;
  const comma = item.lastIndexOf(', ');
  return comma === -1 ? item : item.slice(0, comma);
}

const groupId = (key: string | null) => key ?? '\u0000none';

/** Sums the buckets per group (and per group and bucket, for the chart). */
export function usageView(grouping: UsageGrouping, usage: BucketJson<UsageResultJson>[], costs: BucketJson<CostResultJson>[]): UsageView {
  const times = usage.map((b) => b.start_time);
  const index = new Map(times.map((t, i) => [t, i]));
  const groups = new Map<string, { totals: GroupTotals; series: GroupSeries }>();
  const groupOf = (key: string | null) => {
    let group = groups.get(groupId(key));
    if (!group) {
      const zeros = () => times.map(() => 0);
      group = {
        totals: { key, inputTokens: 0, cachedTokens: 0, outputTokens: 0, requests: 0, cost: null, costUnknown: false },
        series: { key, tokens: zeros(), requests: zeros(), cost: zeros() },
      };
      groups.set(groupId(key), group);
    }
    return group;
  };
  usage.forEach((bucket, i) => {
    for (const r of bucket.results) {
      const { totals, series } = groupOf(r[grouping]);
      totals.inputTokens += r.input_tokens;
      totals.cachedTokens += r.input_cached_tokens;
      totals.outputTokens += r.output_tokens;
      totals.requests += r.num_model_requests;
      series.tokens[i] += r.input_tokens + r.output_tokens;
      series.requests[i] += r.num_model_requests;
    }
  });
  let currency = 'usd';
  for (const bucket of costs) {
    const i = index.get(bucket.start_time);
    for (const r of bucket.results) {
      const { totals, series } = groupOf(costGroupOf(grouping, r));
      if (!r.amount) {
        totals.costUnknown = true;
        continue;
      }
      currency = r.amount.currency;
      totals.cost = (totals.cost ?? 0) + r.amount.value;
      if (i !== undefined) series.cost[i] += r.amount.value;
    }
  }
  const all = [...groups.values()].sort((a, b) => total(b.totals) - total(a.totals));
  return { times, groups: all.map((g) => g.totals), series: all.map((g) => g.series), currency };
}

const total = (g: GroupTotals) => g.inputTokens + g.outputTokens;

/** A cost as the table shows it: the priced part, "unknown" where no price is known, both when mixed. */
export function formatCost(group: Pick<GroupTotals, 'cost' | 'costUnknown'>, currency: string): string {
  if (group.cost === null) return group.costUnknown ? 'unknown' : '—';
  const money = new Intl.NumberFormat('en', { style: 'currency', currency: currency.toUpperCase(), maximumFractionDigits: 6 }).format(group.cost);
  return group.costUnknown ? `${money} + unknown` : money;
}

/** The first second of the UTC day `days - 1` days before today's: a range of `days` whole day buckets ending today. */
export function dayRangeStart(nowMs: number, days: number): number {
  const today = Math.floor(nowMs / 1000 / 86_400) * 86_400;
  return today - (days - 1) * 86_400;
}
