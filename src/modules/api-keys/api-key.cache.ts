import { NotificationWaiters } from '../../db/notification-waiters';
import type { Caller } from '../../auth/scope';

export interface ApiKeyCacheOptions {
  /** Most keys kept; the least recently used goes first. 0 turns the cache off. */
  maxEntries: number;
  /** How long a key is trusted without a database read, even if no invalidation arrives. 0 turns the cache off. */
  ttlMs: number;
  now?: () => number;
}

interface Entry {
  caller: Caller;
  expiresAt: number;
}

/** The channel the database announces key and workspace changes on (see the api_key_change_notifications migration). */
export const API_KEY_CHANNEL = 'gateway_api_keys';

/** The notification announcing a change to one key. */
export const keyChange = (keyId: string) => `key:${keyId}`;

/**
 * Callers by key hash, so an authenticated request costs no SQL statement for its key. Bounded in
 * size (LRU over a Map's insertion order) and in age. It only serves while invalidations are known
 * to arrive (`setActive`): on Postgres, while this process listens for the database's notifications;
 * a replica that cannot hear a revocation must not answer from memory.
 */
export class ApiKeyCache {
  private readonly entries = new Map<string, Entry>();
  /** Bumped by every invalidation: a read that began before one must not store what it read. */
  private generation = 0;
  /** Who waits to hear a notification (see `whenHeard`). */
  private readonly waiters = new NotificationWaiters();
  private readonly now: () => number;

  constructor(
    private readonly options: ApiKeyCacheOptions,
    private active: boolean,
  ) {
    this.now = options.now ?? Date.now;
  }

  get size(): number {
    return this.entries.size;
  }

  get isActive(): boolean {
    return this.active;
  }

  get(hash: string): Caller | undefined {
    const entry = this.entries.get(hash);
    if (!entry) return undefined;
    this.entries.delete(hash);
    if (entry.expiresAt <= this.now()) return undefined;
    this.entries.set(hash, entry);
    return entry.caller;
  }

  /** Taken before reading a key from the database; `store` ignores the result if an invalidation came in between. */
  token(): number {
    return this.generation;
  }

  store(hash: string, caller: Caller, token: number): void {
    const { maxEntries, ttlMs } = this.options;
    if (!this.active || token !== this.generation || maxEntries <= 0 || ttlMs <= 0) return;
    this.entries.delete(hash);
    this.entries.set(hash, { caller, expiresAt: this.now() + ttlMs });
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= maxEntries) break;
      this.entries.delete(oldest);
    }
  }

  invalidateKey(keyId: string): void {
    this.drop((caller) => caller.keyId === keyId);
  }

  invalidateOrganisation(organisationId: string): void {
    this.drop((caller) => caller.organisationId === organisationId);
  }

  /** A notification's payload: `key:<id>` or `organisation:<id>`; anything else empties the cache. */
  applyNotification(payload: string): void {
    const [kind, id] = payload.split(':', 2);
    if (kind === 'key' && id) this.invalidateKey(id);
    else if (kind === 'organisation' && id) this.invalidateOrganisation(id);
    else this.drop(() => true);
  }

  /** Whether a change's author waits for `payload` (see `whenHeard`). */
  isAwaited(payload: string): boolean {
    return this.waiters.isAwaited(payload);
  }

  /** Every listening process, this one included, has applied `payload`. */
  delivered(payload: string): void {
    this.waiters.delivered(payload);
  }

  /** See `NotificationWaiters.whenHeard`. */
  whenHeard(payload: string, timeoutMs: number): { heard: Promise<void>; cancel(): void } {
    return this.waiters.whenHeard(payload, timeoutMs, this.active);
  }

  /** Turned off, the cache forgets everything: invalidations sent meanwhile would not reach it. */
  setActive(active: boolean): void {
    this.active = active;
    if (!active) this.drop(() => true);
  }

  private drop(matches: (caller: Caller) => boolean): void {
    this.generation++;
    for (const [hash, entry] of this.entries) if (matches(entry.caller)) this.entries.delete(hash);
  }
}
