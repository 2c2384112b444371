import type { Express, Request, RequestHandler, Response } from 'express';
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

  /** The labelled series of each method, route and status, made on first use (their label values are bounded). */
  private readonly series = new Map<string, { count: { inc(): void }; time: { observe(seconds: number): void } }>();

  request(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${status} ${route}`;
    let series = this.series.get(key);
    if (!series) {
      const code = String(status);
      series = { count: this.requests.labels(method, code), time: this.latency.labels(method, route, code) };
      this.series.set(key, series);
    }
    series.count.inc();
    series.time.observe(seconds);
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

const ROUTE = Symbol('route');
/** Express's route object, as far as it is read here (it is typed `any`). */
type MatchedRoute = { path?: unknown } | undefined;
type TrackedRequest = Request & { [ROUTE]?: MatchedRoute };

/**
 * Records the full route pattern (`/v1/labels/:labelId`) as Express matches it: routers restore
 * `baseUrl` when an error leaves them, so at the end of the request it is no longer known. The
 * accessor is defined once on the app's request prototype (Express sets every request's prototype
 * to it), not on each request.
 */
function trackRoutes(app: Express): void {
  Object.defineProperty(app.request, 'route', {
    configurable: true,
    enumerable: true,
    get(this: TrackedRequest): MatchedRoute {
      return this[ROUTE];
    },
    set(this: TrackedRequest, value: MatchedRoute) {
      this[ROUTE] = value;
      // Every route of the app is declared with a string path.
      const path = value?.path;
      if (typeof path === 'string') (this.res as Response).locals.route = this.baseUrl + path;
    },
  });
}

/** One JSON log line per request: method, path, route pattern, status, duration. Never headers or bodies. */
export function requestLog(app: Express, logger: Logger, metrics: Metrics): RequestHandler {
  trackRoutes(app);
  return (req, res, next) => {
    const start = performance.now();
    res.on('finish', () => {
      const seconds = (performance.now() - start) / 1000;
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
