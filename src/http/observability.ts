import type { Request, RequestHandler, Response } from 'express';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Logger } from '../logger';

/** Jobs by status, counted when /metrics is scraped (across every tenant: an operator's view). */
export type JobStatusCounts = () => Promise<Array<{ status: string; count: number }>>;

/**
 * The metrics exposed on /metrics (Prometheus text format, prom-client). One registry per app, not
 * prom-client's global one, so several gateways in one process (tests) never share counters.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly requests = new Counter({
    name: 'gateway_http_requests_total',
    help: 'HTTP requests answered, by method and status.',
    labelNames: ['method', 'status'] as const,
    registers: [this.registry],
  });
  private readonly latency = new Histogram({
    name: 'gateway_http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by method, route pattern and status.',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });
  private readonly providerCalls = new Counter({
    name: 'gateway_provider_calls_total',
    help: 'Calls to providers, by provider, operation and outcome (ok or error).',
    labelNames: ['provider', 'operation', 'outcome'] as const,
    registers: [this.registry],
  });
  private readonly providerErrors = new Counter({
    name: 'gateway_provider_errors_total',
    help: 'Provider calls that failed, by provider, operation and the status the gateway answered.',
    labelNames: ['provider', 'operation', 'status'] as const,
    registers: [this.registry],
  });

  constructor() {
    const started = Date.now();
    new Gauge({
      name: 'gateway_uptime_seconds',
      help: 'Seconds since the process started serving.',
      registers: [this.registry],
      collect() {
        this.set(Math.round((Date.now() - started) / 1000));
      },
    });
  }

  /** Adds the job-count gauge; its query runs on each scrape only. */
  countJobs(counts: JobStatusCounts): void {
    new Gauge({
      name: 'gateway_fine_tuning_jobs',
      help: 'Hosted fine-tuning jobs, by status.',
      labelNames: ['status'] as const,
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const { status, count } of await counts()) this.set({ status }, count);
      },
    });
  }

  request(method: string, route: string, status: number, seconds: number): void {
    const code = String(status);
    this.requests.inc({ method, status: code });
    this.latency.observe({ method, route, status: code }, seconds);
  }

  /** One provider call's outcome; `status` is the HTTP status of the gateway's error (502, 504, a provider's 4xx…). */
  providerCall(provider: string, operation: string, errorStatus: number | null): void {
    this.providerCalls.inc({ provider, operation, outcome: errorStatus === null ? 'ok' : 'error' });
    if (errorStatus !== null) this.providerErrors.inc({ provider, operation, status: String(errorStatus) });
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

/**
 * Records the full route pattern (`/v1/labels/:labelId`) as Express matches it: routers restore
 * `baseUrl` when an error leaves them, so at the end of the request it is no longer known.
 */
function trackRoute(req: Request, res: Response): void {
  let route: unknown;
  Object.defineProperty(req, 'route', {
    configurable: true,
    enumerable: true,
    get: () => route,
    set(value: { path?: unknown } | undefined) {
      route = value;
      // Every route of the app is declared with a string path.
      if (typeof value?.path === 'string') res.locals.route = req.baseUrl + value.path;
    },
  });
}

/** One JSON log line per request: method, path, route pattern, status, duration. Never headers or bodies. */
export function requestLog(logger: Logger, metrics: Metrics): RequestHandler {
  return (req, res, next) => {
    const start = process.hrtime.bigint();
    trackRoute(req, res);
    res.on('finish', () => {
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      // Mounted middleware (GraphQL) has no route: its mount point; nothing matched: `unmatched` (bounded label values).
      const route = res.locals.route ?? (req.baseUrl || 'unmatched');
      metrics.request(req.method, route, res.statusCode, seconds);
      // The line's fields are built only when it is written (an operator may run at `warn`; the benchmarks run `silent`).
      if (!logger.isLevelEnabled('info')) return;
      const path = req.originalUrl.split('?')[0];
      logger.info({ method: req.method, path, route, status: res.statusCode, ms: Math.round(seconds * 10_000) / 10 }, 'request');
    });
    next();
  };
}

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace -- Express types its per-request locals through this namespace
  namespace Express {
    interface Locals {
      /** The matched route pattern, set by `requestLog`. */
      route?: string;
    }
  }
}
