import { useCallback, useMemo, useState } from 'preact/hooks';
import { ApiError, listWorkspaces, readKeyScope } from '../api';
import { ErrorNote, Page, useLoad } from '../ui';
import {
  COST_GROUPING,
  dayRangeStart,
  formatCost,
  usageView,
  type BucketJson,
  type CostResultJson,
  type GroupSeries,
  type UsageGrouping,
  type UsageResultJson,
  type UsageView,
} from '../usage';
import { SERIES_COLOURS, TimeChart } from './time-chart';

interface BucketPage<R> {
  data: BucketJson<R>[];
  has_more: boolean;
  next_page: string | null;
}

type Metric = 'tokens' | 'requests' | 'cost';

const GROUPINGS: [UsageGrouping, string][] = [
  ['model', 'Model'],
  ['api_key_id', 'API key'],
  ['project_id', 'Workspace'],
];
const RANGES = [7, 30, 90];
/** Lines drawn at most; the table lists every group. */
const MAX_SERIES = SERIES_COLOURS.length;

/** Every page of a bucketed read (the usage API answers 31 days per page at most). */
async function allBuckets<R>(path: string, query: URLSearchParams): Promise<BucketJson<R>[]> {
  const buckets: BucketJson<R>[] = [];
  for (let page: string | null = null; ;) {
    if (page) query.set('page', page);
    const answer: BucketPage<R> = await readKeyScope<BucketPage<R>>(`${path}?${query}`);
    buckets.push(...answer.data);
    if (!answer.has_more || !answer.next_page) return buckets;
    page = answer.next_page;
  }
}

interface Filters {
  days: number;
  grouping: UsageGrouping;
  /** A workspace id (organisation keys), '' for all of the key's. */
  workspace: string;
}

async function loadUsage({ days, grouping, workspace }: Filters): Promise<UsageView> {
  const base = (groupBy: string, limit: number) => {
    const query = new URLSearchParams({ start_time: String(dayRangeStart(Date.now(), days)), bucket_width: '1d', group_by: groupBy, limit: String(limit) });
    if (workspace) query.set('project_ids', workspace);
    return query;
  };
  const [usage, costs] = await Promise.all([
    allBuckets<UsageResultJson>('/organization/usage/completions', base(grouping, 31)),
    allBuckets<CostResultJson>('/organization/costs', base(COST_GROUPING[grouping], 180)),
  ]);
  return usageView(grouping, usage, costs);
}

/** Names for ids: workspaces and keys of the organisation (an organisation key may list them; a workspace key sees ids). */
async function loadNames(): Promise<{ workspaces: { id: string; name: string }[] | null; keys: Map<string, string> }> {
  const [workspaces, keys] = await Promise.all([
    listWorkspaces(),
    readKeyScope<{ data: { id: string; name: string; prefix: string }[] }>('/api-keys').catch((err: unknown) => {
      if (err instanceof ApiError && err.status === 403) return { data: [] };
      throw err;
    }),
  ]);
  return { workspaces, keys: new Map(keys.data.map((k) => [k.id, `${k.name} (${k.prefix}…)`])) };
}

export function UsagePage() {
  const [filters, setFilters] = useState<Filters>({ days: 7, grouping: 'model', workspace: '' });
  const [metric, setMetric] = useState<Metric>('tokens');
  const names = useLoad(loadNames, []);
  const usage = useLoad(() => loadUsage(filters), [filters.days, filters.grouping, filters.workspace]);
  const change = (update: Partial<Filters>) => setFilters((f) => ({ ...f, ...update }));
  // Stable between renders: the chart is drawn again only when what it shows changes.
  const labelOf = useCallback(
    (key: string | null): string => {
      if (key === null) return filters.grouping === 'api_key_id' ? '(no key: the gateway itself)' : '(none)';
      if (filters.grouping === 'api_key_id') return names.data?.keys.get(key) ?? key;
      if (filters.grouping === 'project_id') return names.data?.workspaces?.find((w) => w.id === key)?.name ?? key;
      return key;
    },
    [filters.grouping, names.data],
  );
  const workspaces = names.data?.workspaces;
  return (
    <Page title="Usage">
      <p class="hint">Chat completions of the gateway (batch requests included), per UTC day; costs from the gateway's price table.</p>
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Period
          <select value={filters.days} onChange={(e) => change({ days: Number(e.currentTarget.value) })}>
            {RANGES.map((d) => (
              <option key={d} value={d}>
                Last {d} days
              </option>
            ))}
          </select>
        </label>
        <label>
          Group by
          <select value={filters.grouping} onChange={(e) => change({ grouping: e.currentTarget.value as UsageGrouping })}>
            {GROUPINGS.map(([value, title]) => (
              <option key={value} value={value}>
                {title}
              </option>
            ))}
          </select>
        </label>
        {workspaces && (
          <label>
            Workspaces
            <select value={filters.workspace} onChange={(e) => change({ workspace: e.currentTarget.value })}>
              <option value="">All workspaces</option>
              {workspaces.map((w) => (
                <option key={w.id} value={w.id}>
                  {w.name}
                </option>
              ))}
            </select>
          </label>
        )}
        <label>
          Chart
          <select value={metric} onChange={(e) => setMetric(e.currentTarget.value as Metric)}>
            <option value="tokens">Tokens (input + output)</option>
            <option value="requests">Requests</option>
            <option value="cost">Cost (priced tokens)</option>
          </select>
        </label>
      </form>
      <ErrorNote error={usage.error ?? names.error} />
      {usage.data && <UsageResults view={usage.data} metric={metric} labelOf={labelOf} />}
    </Page>
  );
}

function UsageResults({ view, metric, labelOf }: { view: UsageView; metric: Metric; labelOf: (key: string | null) => string }) {
  const drawn = useMemo(() => view.series.slice(0, MAX_SERIES), [view]);
  const series = useMemo(() => drawn.map((s: GroupSeries) => ({ label: labelOf(s.key), values: s[metric] })), [drawn, metric, labelOf]);
  if (view.groups.length === 0) return <p>No model call in this period.</p>;
  const unit = metric === 'cost' ? view.currency.toUpperCase() : metric;
  return (
    <>
      <TimeChart
        times={view.times}
        series={series}
        unit={unit}
        summary={`${metric} per day for ${series.map((s) => s.label).join(', ')}; the table below has the totals`}
      />
      {view.series.length > MAX_SERIES && <p class="hint">The chart draws the {MAX_SERIES} largest groups; the table has them all.</p>}
      <div class="table-wrap">
        <table class="usage-table">
          <caption class="visually-hidden">Usage per group over the period, most tokens first</caption>
          <thead>
            <tr>
              <th scope="col">Group</th>
              <th scope="col">Requests</th>
              <th scope="col">Input tokens</th>
              <th scope="col">Cached</th>
              <th scope="col">Output tokens</th>
              <th scope="col">Cost</th>
            </tr>
          </thead>
          <tbody>
            {view.groups.map((g, i) => (
              <tr key={g.key ?? ''}>
                <th scope="row" class="model">
                  {i < MAX_SERIES && <span class="key-swatch" style={{ background: SERIES_COLOURS[i] }} aria-hidden="true" />}
                  {labelOf(g.key)}
                </th>
                <td>{g.requests}</td>
                <td>{g.inputTokens}</td>
                <td>{g.cachedTokens}</td>
                <td>{g.outputTokens}</td>
                <td>{formatCost(g, view.currency)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
