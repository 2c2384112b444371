import type { RequestHandler } from 'express';
import type { Logger } from '../logger';

/** Counters exposed on /metrics in Prometheus' text format. */
export class Metrics {
  private readonly requests = new Map<string, number>();
  private readonly started = Date.now();

  record(method: string, statusCode: number): void {
    const key = `method="${method}",status="${statusCode}"`;
    this.requests.set(key, (this.requests.get(key) ?? 0) + 1);
  }

  render(): string {
    const lines = [
      '# HELP gateway_http_requests_total HTTP requests answered, by method and status.',
      '# TYPE gateway_http_requests_total counter',
      ...[...this.requests].map(([labels, n]) => `gateway_http_requests_total{${labels}} ${n}`),
      '# HELP gateway_uptime_seconds Seconds since the process started serving.',
      '# TYPE gateway_uptime_seconds gauge',
      `gateway_uptime_seconds ${Math.round((Date.now() - this.started) / 1000)}`,
    ];
    return lines.join('\n') + '\n';
  }
}

/** One JSON log line per request: method, path, status, duration. Never headers or bodies. */
export function requestLog(logger: Logger, metrics: Metrics): RequestHandler {
  return (req, res, next) => {
    const start = process.hrtime.bigint();
    res.on('finish', () => {
      metrics.record(req.method, res.statusCode);
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      logger.info({ method: req.method, path: req.path, status: res.statusCode, ms: Math.round(ms * 10) / 10 }, 'request');
    });
    next();
  };
}
