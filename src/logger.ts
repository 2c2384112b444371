import pino, { type Logger } from 'pino';

export type { Logger };

/**
 * JSON logs. Secrets are redacted by path, so a header or credential never reaches a log line.
 * `destination` defaults to stdout (tests pass a stream to read what was logged).
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    level,
    base: undefined,
    redact: {
      paths: [
        'req.headers["x-gateway-api-key"]',
        'req.headers.authorization',
        'headers["x-gateway-api-key"]',
        'headers.authorization',
        'req.headers["x-gateway-federation-secret"]',
        'headers["x-gateway-federation-secret"]',
        '*.credentials',
        '*.apiKey',
        '*.key',
      ],
      censor: '[redacted]',
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
