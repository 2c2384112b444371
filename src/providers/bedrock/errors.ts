/**
 * AWS SDK failures as the gateway's provider errors (api.md §6.2): the service's 4xx status with its
 * error name as the code (ThrottlingException 429, ValidationException 400, AccessDeniedException
 * 403, ResourceNotFoundException 404, …), 502 for its 5xx or an answer the SDK could not read, 504
 * for a time-out, 502 for a connection that failed. Messages carry the service's own words with
 * every credential scrubbed out (a signature error quotes the signed headers, session token included).
 */
import { GatewayError, PROVIDER_UNREACHABLE, providerCode } from '../../errors';
import { redactText, redactValue } from '../redact';

export type AwsService = 'Amazon Bedrock' | 'Amazon S3';

/** What the SDK's service exceptions carry (they all extend smithy's ServiceException). */
interface ServiceFailure {
  name: string;
  message: string;
  $fault: 'client' | 'server';
  $metadata?: { httpStatusCode?: number };
}

function isServiceFailure(err: unknown): err is ServiceFailure {
  return err instanceof Error && '$fault' in err && (err.$fault === 'client' || err.$fault === 'server');
}

/** Errors whose status the SDK may not know (event-stream errors arrive inside a 200 answer). */
const STATUS_BY_NAME: Readonly<Record<string, number>> = {
  ThrottlingException: 429,
  ModelNotReadyException: 429,
  ServiceQuotaExceededException: 400,
  ValidationException: 400,
  ConflictException: 400,
  AccessDeniedException: 403,
  ResourceNotFoundException: 404,
  NoSuchKey: 404,
  NotFound: 404,
};

function serviceError(err: ServiceFailure, service: AwsService, secrets: readonly string[]): GatewayError {
  const status = err.$metadata?.httpStatusCode ?? STATUS_BY_NAME[err.name] ?? (err.$fault === 'server' ? 500 : 400);
  // HEAD answers have no body: the SDK then names the error after the status only.
  const said = err.message && err.message !== 'UnknownError' ? err.message : err.name;
  return new GatewayError('provider', `${service}: ${redactText(said, secrets)}`, {
    status: status >= 500 ? 502 : status,
    code: providerCode(err.name),
    cause: err,
  });
}

/** The gateway error for anything an AWS SDK call threw; GatewayErrors (ours, e.g. a dataset line refused) pass unchanged. */
export function awsFailure(err: unknown, service: AwsService, secrets: readonly string[]): GatewayError {
  if (err instanceof GatewayError) return err;
  if (isServiceFailure(err)) return serviceError(err, service, secrets);
  const e = err instanceof Error ? err : new Error(String(err));
  if (e.name === 'TimeoutError') return new GatewayError('provider', `${service} did not answer in time`, { status: 504, cause: e });
  if (e.name === 'AbortError') return new GatewayError('provider', `The call to ${service} was cancelled`, { status: 502, cause: e });
  // Only an error code, never the cause's message: it may embed the URL or request details.
  const code = 'code' in e && typeof e.code === 'string' ? e.code : undefined;
  return new GatewayError('provider', `Could not reach ${service}${code ? ` (${code})` : ''}`, { status: 502, code: PROVIDER_UNREACHABLE, cause: e });
}

/** Runs an SDK call, mapping what it throws; the credentials are scrubbed out of its output too (redact.ts). */
export async function aws<T>(service: AwsService, secrets: readonly string[], call: () => Promise<T>): Promise<T> {
  try {
    return redactValue(await call(), secrets);
  } catch (err) {
    throw awsFailure(err, service, secrets);
  }
}
