/**
 * Access tokens by key (a hash of the service account and the token endpoint, never the key itself):
 * one exchange serves every call until shortly before the token expires, and concurrent callers
 * share the exchange in flight. A failed exchange is not kept (the next call tries again), and the
 * cache holds a bounded number of accounts, dropping the least recently used.
 */

export interface AccessToken {
  value: string;
  lifetimeSeconds: number;
}

interface Entry {
  token: Promise<AccessToken>;
  /** Epoch ms after which a new token is exchanged; unknown while the exchange is in flight. */
  renewAt: number | null;
  /** The token once issued, to recognise it when Google refuses it. */
  value: string | null;
}

/** Renew this long before expiry (gtoken's margin), or at half the lifetime of a short-lived token. */
const RENEW_MARGIN_S = 5 * 60;

export class TokenCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly capacity: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The token of `key`, exchanged by `exchange` when there is none still fresh or in flight. */
  get(key: string, exchange: () => Promise<AccessToken>): Promise<AccessToken> {
    const cached = this.entries.get(key);
    if (cached && (cached.renewAt === null || this.now() < cached.renewAt)) {
      // Most recently used last: the first entry is the one to drop.
      this.entries.delete(key);
      this.entries.set(key, cached);
      return cached.token;
    }
    const entry: Entry = { token: exchange(), renewAt: null, value: null };
    this.store(key, entry);
    entry.token.then(
      (token) => {
        const margin = Math.min(RENEW_MARGIN_S, token.lifetimeSeconds / 2);
        entry.renewAt = this.now() + (token.lifetimeSeconds - margin) * 1000;
        entry.value = token.value;
      },
      () => {
        if (this.entries.get(key) === entry) this.entries.delete(key);
      },
    );
    return entry.token;
  }

  /** Drops `key`'s token if it is still `value` (refused by Google before its time; another caller may have renewed it). */
  forget(key: string, value: string): void {
    if (this.entries.get(key)?.value === value) this.entries.delete(key);
  }

  get size(): number {
    return this.entries.size;
  }

  private store(key: string, entry: Entry): void {
    this.entries.delete(key);
    this.entries.set(key, entry);
    while (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.entries.delete(oldest.value);
    }
  }
}
