import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from './api';

export const messageOf = (err: unknown) => (err instanceof ApiError || err instanceof Error ? err.message : String(err));

/** An error announced to screen readers as it appears. */
export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <p class="error" role="alert">
      {messageOf(error)}
    </p>
  );
}

export function Status({ status }: { status: string }) {
  const value = status.toLowerCase();
  return <span class={`status status-${value}`}>{value.replace('_', ' ')}</span>;
}

/** A job's `gatewayStatus`: the job monitor retrying a step that failed. */
export interface GatewayStatus {
  reason: string;
  lastError: { message: string };
}

/** The badge of a job whose steps fail and are retried: why, with the last error on hover and for screen readers. */
export function Retrying({ gatewayStatus }: { gatewayStatus: GatewayStatus }) {
  const reason = gatewayStatus.reason.toLowerCase().replace(/_/g, ' ');
  const { message } = gatewayStatus.lastError;
  return (
    <span class="status status-retrying" title={message}>
      retrying: {reason}
      <span class="visually-hidden"> ({message})</span>
    </span>
  );
}

/** Unix seconds (files, jobs) or ISO strings (labels, partials, GraphQL) as local time. */
export function formatTime(value: number | string | null | undefined): string {
  if (value === null || value === undefined) return '—';
  const date = typeof value === 'number' ? new Date(value * 1000) : new Date(value);
  return date.toLocaleString();
}

export function Page({ title, children, actions }: { title: string; children: ComponentChildren; actions?: ComponentChildren }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${title} · Gateway console`;
    // Keyboard and screen-reader users land on the new page's heading after navigating.
    heading.current?.focus();
  }, [title]);
  return (
    <section aria-labelledby="page-title">
      <header class="page-header">
        <h1 id="page-title" tabIndex={-1} ref={heading}>
          {title}
        </h1>
        {actions}
      </header>
      {children}
    </section>
  );
}

interface Action {
  /** The last run's failure (for ErrorNote), cleared when the next one starts. */
  error: unknown;
  /** Runs the action; `confirmFirst` asks before anything is sent (deletes, cancels). */
  run: (action: () => Promise<void>, confirmFirst?: string) => Promise<void>;
  /** A form's submit handler running the action (the form itself is never sent). */
  onSubmit: (action: () => Promise<void>) => (event: Event) => void;
}

/** A user action (a form sent, a button pressed) whose failure is shown until the next run. */
export function useAction(): Action {
  const [error, setError] = useState<unknown>(null);
  const run = async (action: () => Promise<void>, confirmFirst?: string) => {
    if (confirmFirst !== undefined && !confirm(confirmFirst)) return;
    setError(null);
    try {
      await action();
    } catch (err) {
      setError(err);
    }
  };
  const onSubmit = (action: () => Promise<void>) => (event: Event) => {
    event.preventDefault();
    void run(action);
  };
  return { error, run, onSubmit };
}

interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  reload: () => Promise<void>;
}

interface Poll<T> {
  ms: number;
  /** Polling goes on while this holds for the latest data (a running job). */
  while: (data: T) => boolean;
}

/** Loads `load()` now, again on `reload()`, and every `poll.ms` while `poll.while(data)` holds. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[], poll?: Poll<T>): Loaded<T> {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<unknown>(null);
  // Bumped after every attempt, so a failed poll schedules the next one too.
  const [attempts, setAttempts] = useState(0);
  const pollRef = useRef(poll);
  pollRef.current = poll;
  const reload = useCallback(async () => {
    try {
      setData(await load());
      setError(null);
    } catch (err) {
      setError(err);
    }
    setAttempts((n) => n + 1);
  }, deps);
  useEffect(() => {
    void reload();
  }, [reload]);
  useEffect(() => {
    const current = pollRef.current;
    if (!current || data === undefined || !current.while(data)) return;
    const timer = setTimeout(() => void reload(), current.ms);
    return () => clearTimeout(timer);
  }, [attempts, reload]);
  return { data, error, reload };
}

export interface Column {
  label: string;
  /** Hidden on narrow screens (the `wide-only` cells of its rows go with it). */
  wide?: boolean;
  /** Read by screen readers only (a column of buttons needs no visible heading). */
  hidden?: boolean;
}

interface DataTableProps<T> {
  /** Read by screen readers only: what the rows are and in which order. */
  caption: string;
  columns: Column[];
  /** Undefined while loading (nothing is shown). */
  rows: T[] | undefined;
  row: (item: T, index: number) => ComponentChildren;
  /** Shown instead of an empty table; without it an empty list shows nothing. */
  empty?: string;
  class?: string;
}

/** A list as a table that scrolls sideways on narrow screens, one header row, a row per item. */
export function DataTable<T>({ caption, columns, rows, row, empty, class: className }: DataTableProps<T>) {
  if (!rows) return null;
  if (rows.length === 0) return empty ? <p>{empty}</p> : null;
  return (
    <div class="table-wrap">
      <table class={className}>
        <caption class="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c.label} scope="col" class={c.wide ? 'wide-only' : undefined}>
                {c.hidden ? <span class="visually-hidden">{c.label}</span> : c.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{rows.map(row)}</tbody>
      </table>
    </div>
  );
}
