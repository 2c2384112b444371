import { useState } from 'preact/hooks';
import { readKeyScope } from '../api';
import { href } from '../router';
import { ErrorNote, Page, formatTime, useAction, useLoad } from '../ui';

/** One entry of `GET /v1/logs`: what a model call was, never its prompt or answer. */
interface LogEntry {
  id: string;
  created_at: number;
  operation: string;
  status: number;
  provider: string;
  integration: string | null;
  model: string;
  base_model: string | null;
  mode: string;
  streamed: boolean;
  input_tokens: number;
  cached_tokens: number;
  output_tokens: number;
  latency_ms: number | null;
  ttft_ms: number | null;
  api_key_id: string | null;
  workspace_id: string | null;
  provider_request_id: string | null;
}

interface LogList {
  data: LogEntry[];
  has_more: boolean;
  last_id: string | null;
}

interface Filters {
  model: string;
  /** '', `success`, `error` or a status code. */
  status: string;
  apiKeyId: string;
  /** `datetime-local` values ('' for none). */
  from: string;
  to: string;
}

const NO_FILTERS: Filters = { model: '', status: '', apiKeyId: '', from: '', to: '' };
const PAGE_SIZE = 50;

const unixOf = (local: string) => String(Math.floor(new Date(local).getTime() / 1000));

/** The log's query for the filters that are set; `after` continues below the last entry shown. */
function logQuery(filters: Filters, after?: string): string {
  const query = new URLSearchParams({ limit: String(PAGE_SIZE) });
  if (filters.model.trim()) query.set('model', filters.model.trim());
  if (filters.status.trim()) query.set('status', filters.status.trim());
  if (filters.apiKeyId.trim()) query.set('api_key_id', filters.apiKeyId.trim());
  if (filters.from) query.set('start_time', unixOf(filters.from));
  if (filters.to) query.set('end_time', unixOf(filters.to));
  if (after) query.set('after', after);
  return `/logs?${query}`;
}

export function LogsPage({ id }: { id?: string }) {
  return id ? <LogEntryPage id={id} /> : <LogList />;
}

function LogList() {
  const [draft, setDraft] = useState<Filters>(NO_FILTERS);
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const [older, setOlder] = useState<LogEntry[]>([]);
  const [more, setMore] = useState<boolean | null>(null);
  const first = useLoad(async () => {
    const page = await readKeyScope<LogList>(logQuery(filters));
    setOlder([]);
    setMore(page.has_more);
    return page.data;
  }, [filters]);
  const paging = useAction();
  const entries = [...(first.data ?? []), ...older];
  const loadOlder = () =>
    paging.run(async () => {
      const page = await readKeyScope<LogList>(logQuery(filters, entries.at(-1)?.id));
      setOlder((o) => [...o, ...page.data]);
      setMore(page.has_more);
    });
  const edit = (change: Partial<Filters>) => setDraft((d) => ({ ...d, ...change }));
  return (
    <Page title="Request log">
      <p class="hint">The latest model calls, newest first: status, model, tokens and timings, never the prompt or the answer.</p>
      <form
        class="filters"
        aria-label="Log filters"
        onSubmit={(e) => {
          e.preventDefault();
          setFilters(draft);
        }}
      >
        <label>
          Model
          <input value={draft.model} onInput={(e) => edit({ model: e.currentTarget.value })} />
        </label>
        <label>
          Status
          <select value={draft.status} onChange={(e) => edit({ status: e.currentTarget.value })}>
            <option value="">Any</option>
            <option value="success">Success (below 400)</option>
            <option value="error">Error (400 and above)</option>
          </select>
        </label>
        <label>
          API key id
          <input value={draft.apiKeyId} onInput={(e) => edit({ apiKeyId: e.currentTarget.value })} />
        </label>
        <label>
          From
          <input type="datetime-local" value={draft.from} onInput={(e) => edit({ from: e.currentTarget.value })} />
        </label>
        <label>
          To
          <input type="datetime-local" value={draft.to} onInput={(e) => edit({ to: e.currentTarget.value })} />
        </label>
        <div class="actions">
          <button type="submit">Apply filters</button>
          <button type="button" class="secondary" onClick={() => (setDraft(NO_FILTERS), setFilters(NO_FILTERS))}>
            Clear
          </button>
        </div>
      </form>
      <ErrorNote error={first.error} />
      {first.data && entries.length === 0 && <p>No model call matches.</p>}
      {entries.length > 0 && <LogTable entries={entries} />}
      <ErrorNote error={paging.error} />
      {more && (
        <button type="button" class="secondary" onClick={() => void loadOlder()}>
          Older entries
        </button>
      )}
    </Page>
  );
}

const tokens = (e: LogEntry) => `${e.input_tokens} → ${e.output_tokens}`;
const ms = (value: number | null) => (value === null ? '—' : `${value} ms`);

function LogTable({ entries }: { entries: LogEntry[] }) {
  return (
    <div class="table-wrap">
      <table class="log-table">
        <caption class="visually-hidden">Model calls, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Status</th>
            <th scope="col">Model</th>
            <th scope="col" class="wide-only">
              Provider
            </th>
            <th scope="col">Tokens in → out</th>
            <th scope="col" class="wide-only">
              Latency
            </th>
          </tr>
        </thead>
        <tbody>
          {entries.map((e) => (
            <tr key={e.id}>
              <td>
                <a href={href('logs', e.id)} aria-label={`Entry ${e.id}`}>
                  {formatTime(e.created_at)}
                </a>
              </td>
              <td>
                <span class={`status ${e.status < 400 ? 'status-succeeded' : 'status-failed'}`}>{e.status}</span>
              </td>
              <td class="model">{e.model}</td>
              <td class="wide-only">
                {e.provider} {e.integration && <span class="muted">@{e.integration}</span>}
              </td>
              <td>{tokens(e)}</td>
              <td class="wide-only">{ms(e.latency_ms)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/**
 * One entry. The log is read by cursor only: the entry is the first one older than the id after it
 * (ids are increasing integers), so no other read is needed.
 */
async function loadEntry(id: string): Promise<LogEntry | null> {
  if (!/^\d{1,19}$/.test(id)) return null;
  const page = await readKeyScope<LogList>(`/logs?limit=1&after=${BigInt(id) + 1n}`);
  return page.data[0]?.id === id ? page.data[0] : null;
}

function LogEntryPage({ id }: { id: string }) {
  const entry = useLoad(() => loadEntry(id), [id]);
  const e = entry.data;
  return (
    <Page title="Log entry" actions={<a href={href('logs')}>All entries</a>}>
      <ErrorNote error={entry.error} />
      {e === null && <p>No log entry {id} in this key's scope (entries are kept for the retention period only).</p>}
      {e && (
        <dl class="facts" data-testid="log-entry">
          <dt>Id</dt>
          <dd>{e.id}</dd>
          <dt>Time</dt>
          <dd>{formatTime(e.created_at)}</dd>
          <dt>Status</dt>
          <dd>{e.status}</dd>
          <dt>Operation</dt>
          <dd>
            {e.operation} ({e.mode} mode{e.streamed ? ', streamed' : ''})
          </dd>
          <dt>Model</dt>
          <dd>
            {e.model}
            {e.base_model && <span class="muted"> (base {e.base_model})</span>}
          </dd>
          <dt>Provider</dt>
          <dd>
            {e.provider}
            {e.integration && ` @${e.integration}`}
          </dd>
          <dt>Input tokens</dt>
          <dd>
            {e.input_tokens} ({e.cached_tokens} cached)
          </dd>
          <dt>Output tokens</dt>
          <dd>{e.output_tokens}</dd>
          <dt>Latency</dt>
          <dd>{ms(e.latency_ms)}</dd>
          <dt>Time to first token</dt>
          <dd>{ms(e.ttft_ms)}</dd>
          <dt>API key</dt>
          <dd>{e.api_key_id ?? '— (the gateway itself)'}</dd>
          <dt>Workspace</dt>
          <dd>{e.workspace_id ?? '—'}</dd>
          <dt>Provider request id</dt>
          <dd>{e.provider_request_id ?? '—'}</dd>
        </dl>
      )}
    </Page>
  );
}
