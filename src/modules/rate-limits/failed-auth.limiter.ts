import { GatewayError } from '../../errors';
import type { Logger } from '../../logger';
import { RateLimiter, type RateLimitState } from './rate-limiter';

export interface FailedAuthOptions {
  /** Failed authentications one client address may make per minute. */
  perClientPerMinute: number;
  /** Failed authentications per minute over all clients (many addresses, one attacker). */
  globalPerMinute: number;
  /** Shared counters, as for the per-key rate limit; each process counts alone without it. */
  redisUrl: string | undefined;
  keyPrefix: string;
}

/** More remembered addresses than this and the oldest are forgotten (a flood of addresses cannot grow memory). */
const MAX_TRACKED_CLIENTS = 100_000;

/**
 * Failed authentications: every unknown key is an API key cache miss and a database read, so a client
 * guessing keys is refused (429, `Retry-After`) once it has failed `perClientPerMinute` times, before
 * its next lookup. Over all clients, once `globalPerMinute` failures are counted, every client that has
 * failed at least once in its current minute is refused too: a guesser spread over many addresses is
 * stopped, while clients that have not failed are never refused by someone else's failures.
 *
 * Only failures are counted (in memory or Redis); the check before a lookup reads two in-process maps,
 * and a request whose key is in the API key cache never reaches it.
 */
export class FailedAuthLimiter {
  private readonly perClient: RateLimiter;
  private readonly global: RateLimiter;
  /** Clients refused until a time (ms since epoch). */
  private readonly blocked = new Map<string, number>();
  /** Clients that have failed, until the end of their counting window. */
  private readonly failing = new Map<string, number>();
  private globalBlockedUntil = 0;

  constructor(options: FailedAuthOptions, logger: Pick<Logger, 'warn' | 'info'>) {
    const { redisUrl, keyPrefix } = options;
    this.perClient = new RateLimiter({ perMinute: options.perClientPerMinute, redisUrl, keyPrefix: `${keyPrefix}:auth-fail` }, logger);
    this.global = new RateLimiter({ perMinute: options.globalPerMinute, redisUrl, keyPrefix: `${keyPrefix}:auth-fail-all` }, logger);
  }

  async ready(timeoutMs: number): Promise<void> {
    await Promise.all([this.perClient.ready(timeoutMs), this.global.ready(timeoutMs)]);
  }

  /** Before an API key lookup: a 429 for a client over its budget (or a failing client over everyone's). */
  refuseIfBlocked(client: string): void {
    const now = Date.now();
    const until = Math.max(this.blocked.get(client) ?? 0, this.globalBlockedUntil > now && (this.failing.get(client) ?? 0) > now ? this.globalBlockedUntil : 0);
    if (until > now) throw tooManyFailures(until - now);
  }

  /** After a lookup found no active key: counts it against the client and everyone. */
  async failed(client: string): Promise<void> {
    const [mine, everyone] = await Promise.all([this.perClient.consume(client), this.global.consume('all')]);
    const now = Date.now();
    remember(this.failing, client, now + mine.resetMs);
    // The budget's last failure closes it: the next attempt is refused without a lookup.
    if (spent(mine)) remember(this.blocked, client, now + mine.resetMs);
    if (spent(everyone)) this.globalBlockedUntil = now + everyone.resetMs;
  }

  close(): void {
    this.perClient.close();
    this.global.close();
  }
}

const spent = (state: RateLimitState) => !state.allowed || state.remaining === 0;

function remember(map: Map<string, number>, client: string, until: number): void {
  map.delete(client);
  if (map.size >= MAX_TRACKED_CLIENTS) map.delete(map.keys().next().value as string);
  map.set(client, until);
}

function tooManyFailures(retryMs: number): GatewayError {
  return new GatewayError('rate_limited', 'Too many failed authentications from this client: retry after the time in Retry-After', {
    code: 'too_many_failed_authentications',
    retryAfterSeconds: Math.max(1, Math.ceil(retryMs / 1000)),
  });
}
