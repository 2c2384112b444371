/** How the job monitor judges a failed step: retry later, or fail the job with the provider's reason. */
import { GatewayError, PROVIDER_UNREACHABLE } from '../../errors';
import type { JobError, RetryError, RetryReason } from './fine-tuning.model';

/** Worth retrying later: the provider's 429 and 5xx (incl. timeouts and unreachable), and our own unexpected failures. */
export function isTransient(err: unknown): boolean {
  if (!(err instanceof GatewayError)) return true;
  if (err.kind === 'provider') return err.status === 429 || err.status >= 500;
  return err.kind === 'rate_limited';
}

/** The job's `error` object: the provider's code, message and param when it refused. */
export function jobError(err: unknown): JobError {
  if (err instanceof GatewayError) {
    return { code: err.answerCode, message: err.message, param: err.param ?? err.path?.join('.') ?? null };
  }
  return { code: 'internal_error', message: 'The gateway could not run this job step', param: null };
}

/** A failure that will be retried, as the job's `gateway_status` shows it. */
export function retryError(err: unknown): RetryError {
  const { code, message } = jobError(err);
  return { reason: retryReason(err), code, message, status: err instanceof GatewayError ? err.status : null };
}

function retryReason(err: unknown): RetryReason {
  if (!(err instanceof GatewayError)) return 'gateway_error';
  if (err.status === 429 || err.kind === 'rate_limited') return 'provider_rate_limited';
  // A refused connection, a name that does not resolve, a call that timed out: nothing answered.
  if (err.code === PROVIDER_UNREACHABLE || err.status === 504) return 'provider_unreachable';
  return 'provider_unavailable';
}

/** A log-safe description of an error (a GatewayError's message is already free of credentials). */
export const describeError = (err: unknown) =>
  err instanceof GatewayError ? { kind: err.kind, status: err.status, code: err.code, message: err.message } : err;
