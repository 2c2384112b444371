import type * as IORedis from 'ioredis';
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { lazyRequire } from '../../lazy';
import type { Logger } from '../../logger';

export interface RateLimitOptions {
  /** Requests per API key per minute. */
  perMinute: number;
  /** Counters shared by every replica pointing at the same Redis; each process counts alone without it. */
  redisUrl: string | undefined;
  /** Prefix of the Redis keys, so several gateways (or test runs) can share one Redis. */
  keyPrefix: string;
}

/** Where a caller stands in the current window: what the `x-ratelimit-*` headers report. */
export interface RateLimitState {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Milliseconds until the window resets (a refused caller may retry then). */
  resetMs: number;
}

const WINDOW_SECONDS = 60;

const ioredis = lazyRequire<typeof IORedis>(require, 'ioredis');

/**
 * Requests per API key per minute. With Redis the counters are shared; if Redis is unreachable the
 * limiter falls back to in-process counters (rate-limiter-flexible's insurance limiter) so requests
 * keep being served, and says so once per outage rather than on every request.
 */
export class RateLimiter {
  private readonly limiter: RateLimiterAbstract;
  private readonly redis: Redis | undefined;

  constructor(
    private readonly options: RateLimitOptions,
    logger: Pick<Logger, 'warn' | 'info'>,
  ) {
    const memory = new RateLimiterMemory({ points: options.perMinute, duration: WINDOW_SECONDS, keyPrefix: options.keyPrefix });
    if (!options.redisUrl) {
      this.limiter = memory;
      return;
    }
    // Required here: a gateway counting in its own memory never loads the Redis client.
    const { Redis } = ioredis();
    this.redis = new Redis(options.redisUrl, {
      // A command for a Redis that is down must fail at once (the insurance limiter answers), never queue.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: 500,
      lazyConnect: false,
    });
    watchConnection(this.redis, logger);
    this.limiter = new RateLimiterRedis({
      storeClient: this.redis,
      rejectIfRedisNotReady: true,
      points: options.perMinute,
      duration: WINDOW_SECONDS,
      keyPrefix: options.keyPrefix,
      insuranceLimiter: memory,
    });
  }

  /**
   * Waits (at most `timeoutMs`) for Redis to be ready, so a gateway that has just started shares its
   * counters from the first request; a Redis still unreachable then is no reason not to start.
   */
  async ready(timeoutMs: number): Promise<void> {
    const redis = this.redis;
    if (!redis || redis.status === 'ready') return;
    let timer: NodeJS.Timeout | undefined;
    let onReady: (() => void) | undefined;
    await new Promise<void>((resolve) => {
      onReady = resolve;
      timer = setTimeout(resolve, timeoutMs);
      redis.once('ready', onReady);
    });
    clearTimeout(timer);
    if (onReady) redis.removeListener('ready', onReady);
  }

  /** Counts one request of `key` and tells whether it may proceed. */
  async consume(key: string): Promise<RateLimitState> {
    try {
      return this.state(true, await this.limiter.consume(key));
    } catch (res) {
      if (res instanceof RateLimiterRes) return this.state(false, res);
      throw res;
    }
  }

  close(): void {
    this.redis?.disconnect();
  }

  private state(allowed: boolean, res: RateLimiterRes): RateLimitState {
    return { allowed, limit: this.options.perMinute, remaining: Math.max(0, res.remainingPoints), resetMs: Math.max(0, res.msBeforeNext) };
  }
}

/** Logs the first error of an outage and the recovery, not every reconnection attempt in between. */
function watchConnection(redis: Redis, logger: Pick<Logger, 'warn' | 'info'>): void {
  let down = false;
  redis.on('error', (err: Error) => {
    if (down) return;
    down = true;
    logger.warn({ err: { message: err.message } }, 'rate limiter: Redis unreachable, counting in this process until it returns');
  });
  redis.on('ready', () => {
    if (!down) return;
    down = false;
    logger.info('rate limiter: Redis reachable again, counters shared');
  });
}
