/**
 * The expectations and waits every test file shares: an error answer in the documented shape
 * (`expectError`), a call that must fail with a GatewayError (`failure`), and a condition that holds
 * sooner or later (`eventually`). One copy each, so a change to the error shape is one edit.
 */
import { APIError } from 'openai';
import { GatewayError } from '../../src/errors';

export interface ExpectedError {
  type?: string;
  param?: string | null;
  code?: string | null;
  message?: string | RegExp;
}

/**
 * An HTTP answer with `status` and OpenAI's error body, `{ error: { message, type, param, code } }`
 * with exactly those keys in that order; the fields given in `expected` must match.
 */
export function expectError(res: { status: number; body: any }, status: number, expected: ExpectedError = {}): void {
  expect(res.status).toBe(status);
  expect(Object.keys(res.body.error)).toEqual(['message', 'type', 'param', 'code']);
  expect(res.body.error.message).toEqual(expect.any(String));
  if (expected.type !== undefined) expect(res.body.error.type).toBe(expected.type);
  if (expected.param !== undefined) expect(res.body.error.param).toBe(expected.param);
  if (expected.code !== undefined) expect(res.body.error.code).toBe(expected.code);
  if (expected.message !== undefined) expect(res.body.error.message).toMatch(expected.message);
}

/** The rejection of `promise`, which must be a GatewayError (of `kind`, when given). */
export async function failure(promise: Promise<unknown>, kind?: GatewayError['kind']): Promise<GatewayError> {
  const outcome = await promise.then(
    () => ({ resolved: true as const }),
    (error: unknown) => ({ resolved: false as const, error }),
  );
  if (outcome.resolved) throw new Error(`expected a ${kind ?? 'GatewayError'} failure, the call succeeded`);
  if (!(outcome.error instanceof GatewayError)) throw new Error(`expected a GatewayError, got ${String(outcome.error)}`);
  if (kind !== undefined) expect(outcome.error.kind).toBe(kind);
  return outcome.error;
}

/**
 * Calls `check` every `everyMs` until it returns a value other than `undefined` or `false`, and
 * returns that value; throws naming `what` after `timeoutMs`. For effects that land asynchronously
 * (a monitor's poll, a notification, a stream's close seen by a fake).
 */
export async function eventually<T>(
  check: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 20_000,
  everyMs = 50,
  what = 'a condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** The error an OpenAI SDK call fails with (the test fails if it succeeds). */
export async function apiError(call: Promise<unknown>): Promise<APIError> {
  const outcome = await call.then(
    () => new Error('expected the call to fail'),
    (e: unknown) => e,
  );
  expect(outcome).toBeInstanceOf(APIError);
  return outcome as APIError;
}
