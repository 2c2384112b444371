import pino, { type Logger } from 'pino';

export type { Logger };

/** JSON logs. Secrets are redacted by path, so a header or credential never reaches a log line. */
export function createLogger(level: string): Logger {
  return pino({
    level,
    base: undefined,
    redact: {
      paths: [
        'req.headers["x-gateway-api-key"]',
        'req.headers.authorization',
        'headers["x-gateway-api-key"]',
        'headers.authorization',
        '*.credentials',
        '*.apiKey',
        '*.key',
      ],
      censor: '[redacted]',
    },
  });
}
