/**
 * A job's events and checkpoints from Together's own endpoints (`/fine-tunes/{id}/events`,
 * `/checkpoints`, `/metrics`), none of them paged by Together: ordered newest first and paged here.
 * Together's events carry no id, so each gets a stable one from its content; the training metrics
 * become `metrics` events (and the metrics of the checkpoint at the same step).
 */
import { createHash } from 'node:crypto';
import { GatewayError } from '../../errors';
import { pageOf } from '../paging';
import type { EventLevel, PageInput, ProviderCheckpoint, ProviderEvent, ProviderPage } from '../types';
import { apiRequest } from '../api';
import { jobPath, type TogetherConnection } from './connection';
import { unixSeconds } from './mappers';
import { togetherCheckpointListSchema, togetherEventListSchema, togetherMetricsSchema, type TogetherEvent } from './schemas';

/** One record per logged step: `{"train/loss": 0.75, "train/global_step": 10, …}`. */
type Metrics = Record<string, number>;

export async function listEvents(conn: TogetherConnection, id: string, page: PageInput): Promise<ProviderPage<ProviderEvent>> {
  const [events, metrics] = await Promise.all([
    apiRequest(conn, { answer: togetherEventListSchema, method: 'GET', path: jobPath(id, '/events') }),
    stepMetrics(conn, id),
  ]);
  return pageOf(withMetrics(events.data ?? [], metrics).reverse(), page);
}

export async function listCheckpoints(conn: TogetherConnection, id: string, page: PageInput): Promise<ProviderPage<ProviderCheckpoint>> {
  const [checkpoints, metrics] = await Promise.all([
    apiRequest(conn, { answer: togetherCheckpointListSchema, method: 'GET', path: jobPath(id, '/checkpoints') }),
    stepMetrics(conn, id),
  ]);
  const mapped = (checkpoints.data ?? []).map((c) => toCheckpoint(id, c, metrics.get(c.step) ?? {}));
  return pageOf(
    mapped.sort((a, b) => b.stepNumber - a.stepNumber),
    page,
  );
}

/** The training metrics by global step; a job that logged none (or predates the endpoint) has none. */
async function stepMetrics(conn: TogetherConnection, id: string): Promise<Map<number, Metrics>> {
  const answer = await apiRequest(conn, { answer: togetherMetricsSchema, method: 'GET', path: jobPath(id, '/metrics') }).catch((err: unknown) => {
    if (err instanceof GatewayError && err.status === 404) return { metrics: [] };
    throw err;
  });
  return new Map((answer.metrics ?? []).map((m, i) => [m['train/global_step'] ?? i + 1, m]));
}

/** Together's events, oldest first, each step's metrics following the event logged at that step. */
function withMetrics(events: TogetherEvent[], metrics: Map<number, Metrics>): ProviderEvent[] {
  const out: ProviderEvent[] = [];
  const pending = new Map(metrics);
  for (const event of events) {
    out.push(toEvent(event));
    const atStep = event.step ? pending.get(event.step) : undefined;
    if (atStep && event.step) {
      out.push(metricsEvent(event.step, atStep, unixSeconds(event.created_at)));
      pending.delete(event.step);
    }
  }
  const latest = out.at(-1)?.createdAt ?? 0;
  for (const [step, values] of pending) out.push(metricsEvent(step, values, latest));
  return out;
}

const LEVELS: Readonly<Record<string, EventLevel>> = { info: 'info', warning: 'warn', warn: 'warn', error: 'error' };

function toEvent(e: TogetherEvent): ProviderEvent {
  const identity = JSON.stringify([e.created_at, e.type ?? '', e.message ?? '', e.step ?? 0, e.checkpoint_path ?? '', e.model_path ?? '']);
  const data: Record<string, unknown> = { type: e.type ?? null };
  if (e.step) data.step = e.step;
  if (e.checkpoint_path) data.checkpoint_path = e.checkpoint_path;
  if (e.model_path) data.model_path = e.model_path;
  return {
    id: `ftevent-${createHash('sha256').update(identity).digest('hex').slice(0, 24)}`,
    createdAt: unixSeconds(e.created_at),
    level: LEVELS[e.level ?? 'info'] ?? 'info',
    message: e.message ?? e.type ?? '',
    type: 'message',
    data,
  };
}

function metricsEvent(step: number, values: Metrics, createdAt: number): ProviderEvent {
  const reported = Object.entries(values).filter(([name]) => name !== 'train/global_step');
  return {
    id: `ftevent-metrics-step-${step}`,
    createdAt,
    level: 'info',
    message: `Step ${step}: ${reported.map(([name, value]) => `${name}=${value}`).join(', ')}`,
    type: 'metrics',
    data: { step, ...Object.fromEntries(reported) },
  };
}

/** `<job id>:<step>` is how Together names a checkpoint to continue from (`from_checkpoint`). */
function toCheckpoint(jobId: string, c: { step: number; created_at: string }, metrics: Metrics): ProviderCheckpoint {
  const name = `${jobId}:${c.step}`;
  return { id: name, createdAt: unixSeconds(c.created_at), fineTunedModelCheckpoint: name, stepNumber: c.step, metrics, fineTuningJobId: jobId };
}
