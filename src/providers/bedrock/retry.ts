/**
 * The AWS SDK clients' retry policy, made to follow the gateway's HTTP policy (http.ts) rather than
 * the SDK's own: a bounded number of retries of throttling, server errors and dropped connections,
 * exponential back-off from the configured first step (or the wait the service asks for), capped;
 * a time-out is not retried, since the attempt already used its whole time budget.
 */
import type { RetryErrorInfo, RetryStrategyV2, RetryToken } from '@smithy/types';
import { DEFAULT_HTTP_POLICY, type HttpPolicy } from '../http';

const token = (count: number, delayMs: number): RetryToken => ({ getRetryCount: () => count, getRetryDelay: () => delayMs });

function retryable(info: RetryErrorInfo): boolean {
  if (info.errorType === 'CLIENT_ERROR') return false;
  return info.error?.name !== 'TimeoutError';
}

export function retryStrategy(http: HttpPolicy): RetryStrategyV2 {
  const policy = { ...DEFAULT_HTTP_POLICY, ...http };
  return {
    acquireInitialRetryToken: () => Promise.resolve(token(0, 0)),
    refreshRetryTokenForRetry(previous, info) {
      const count = previous.getRetryCount();
      // A rejection tells the SDK to stop and surface the last error.
      if (count >= policy.retries || !retryable(info)) return Promise.reject(new Error('no retry'));
      const asked = info.retryAfterHint ? info.retryAfterHint.getTime() - Date.now() : undefined;
      const delay = Math.max(0, Math.min(asked ?? policy.baseDelayMs * 2 ** count, policy.maxRetryWaitMs));
      return Promise.resolve(token(count + 1, delay));
    },
    recordSuccess: () => undefined,
  };
}

/** Attempts in all, as the SDK's `maxAttempts` (it shows in the `amz-sdk-request` header). */
export const maxAttempts = (http: HttpPolicy) => (http.retries ?? DEFAULT_HTTP_POLICY.retries) + 1;
