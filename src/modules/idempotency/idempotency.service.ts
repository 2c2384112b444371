import { createHash } from 'node:crypto';
import type { Sealer } from '../../crypto/secret-box';
import { isUniqueViolation } from '../../db/prisma-errors';
import { conflict, GatewayError } from '../../errors';
import type { Logger } from '../../logger';
import type { IdempotencyOwner, IdempotencyRepository } from './idempotency.repository';

export type { IdempotencyOwner };

/** How long a key holds its first answer. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;
/**
 * How long a claim may stay unanswered before it counts as abandoned: its request died with its
 * process (a crash, a kill) and will never settle it. Far longer than any creating request runs (the
 * slowest, an upload, is bounded by GATEWAY_REQUEST_TIMEOUT_MS, 5 minutes by default), so a live
 * request is never overtaken; a retry after that takes the key over instead of a 409 for 24 hours.
 */
export const IDEMPOTENCY_CLAIM_LEASE_MS = 15 * 60 * 1000;

/** A key this request now holds: `complete` records its answer, `release` frees the key for a retry. */
export interface IdempotencyClaim {
  kind: 'claimed';
  owner: IdempotencyOwner;
  id: string;
  key: string;
}

/** The first request's answer, to send again. */
export interface IdempotentReplay {
  kind: 'replay';
  status: number;
  body: unknown;
}

/** SHA-256 over the parts that identify a request, each length-prefixed so no two lists collide. */
export function fingerprintOf(parts: readonly string[]): string {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(`${Buffer.byteLength(part)}:${part};`);
  return hash.digest('hex');
}

/**
 * Stripe-style idempotency keys for creating requests. The first request claims the key by inserting
 * its row (the unique constraint settles races between concurrent duplicates: exactly one insert wins),
 * runs, and records its answer; later requests with the key replay that answer, or get 409 while it
 * still runs and 422 if they are a different request. A failed creation releases the key; a claim
 * left unanswered by a process that stopped is taken over after IDEMPOTENCY_CLAIM_LEASE_MS.
 */
export class IdempotencyService {
  constructor(
    private readonly keys: IdempotencyRepository,
    private readonly secrets: Sealer,
    private readonly logger: Pick<Logger, 'warn'>,
  ) {}

  async claim(owner: IdempotencyOwner, key: string, fingerprint: string): Promise<IdempotencyClaim | IdempotentReplay> {
    const now = new Date();
    await this.keys.removeExpired(owner.organisationId, now);
    try {
      const row = await this.keys.insert(owner, key, fingerprint, expiresAt(now));
      return { kind: 'claimed', owner, id: row.id, key };
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
    }
    const existing = await this.keys.find(owner, key);
    // Released (the first request failed) between our insert and this read: the caller may retry at once.
    if (!existing) throw inProgress(key);
    if (existing.fingerprint !== fingerprint) {
      throw new GatewayError('invalid_request', `Idempotency-Key '${key}' was already used with a different request`, {
        code: 'idempotency_key_reused',
        param: 'Idempotency-Key',
        status: 422,
      });
    }
    if (existing.status === null || existing.response === null) {
      const abandonedBefore = new Date(now.getTime() - IDEMPOTENCY_CLAIM_LEASE_MS);
      if (existing.createdAt < abandonedBefore && (await this.keys.takeOver(owner, existing.id, abandonedBefore, now, expiresAt(now)))) {
        this.logger.warn({ idempotencyKeyId: existing.id }, 'took over an idempotency key whose request never answered (its process stopped)');
        return { kind: 'claimed', owner, id: existing.id, key };
      }
      throw inProgress(key);
    }
    return { kind: 'replay', status: existing.status, body: JSON.parse(this.secrets.open(existing.response, sealContext(owner, key))) };
  }

  /**
   * Settles the claim with the request's answer: a success is kept for replay, a failure releases
   * the key. If the answer cannot be kept the key is released (logged), never left claimed.
   */
  async settle(claim: IdempotencyClaim, status: number, body: unknown): Promise<void> {
    if (status >= 400) {
      await this.release(claim);
      return;
    }
    try {
      const sealed = this.secrets.seal(JSON.stringify(body ?? null), sealContext(claim.owner, claim.key));
      await this.keys.complete(claim.owner, claim.id, status, sealed);
    } catch (err) {
      this.logger.warn({ err, idempotencyKeyId: claim.id }, 'could not record an idempotent answer; releasing its key');
      await this.release(claim);
    }
  }

  /** Frees the key: the creation failed, so a retry may run it again. Never throws (logged). */
  async release(claim: IdempotencyClaim): Promise<void> {
    try {
      await this.keys.remove(claim.owner, claim.id);
    } catch (err) {
      this.logger.warn({ err, idempotencyKeyId: claim.id }, 'could not release an idempotency key');
    }
  }
}

const expiresAt = (now: Date) => new Date(now.getTime() + IDEMPOTENCY_TTL_MS);

/** Binds a sealed answer to its owner and key, so a row copied elsewhere does not open. */
const sealContext = (owner: IdempotencyOwner, key: string) => `idempotency:${owner.organisationId}:${owner.scope}:${key}`;

const inProgress = (key: string) =>
  conflict(`A request with Idempotency-Key '${key}' is still being processed; retry once it has finished`, undefined, 'idempotency_key_in_use');
