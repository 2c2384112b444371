import { LRUCache } from 'lru-cache';
import { NotificationWaiters } from '../../db/notification-waiters';
import type { WorkspaceChanges } from '../../db/workspace-changes';
import type { HostedJob } from '../fine-tuning/fine-tuning.model';
import type { IntegrationSource, ResolvedIntegration } from '../integrations/integration.port';

export interface HostedCacheOptions {
  /** Most hosted models (workspace and model) kept; the least recently used goes first. 0 turns the cache off. */
  maxEntries: number;
  /** Most characters of prompt partial texts kept (their versions' total length). 0 turns that cache off. */
  maxPartialChars: number;
  /** How long an entry is trusted without a database read, even if no invalidation arrives. 0 turns the cache off. */
  ttlMs: number;
}

/** What a hosted chat call resolves `model` to: the serving job and its integration, credentials decrypted. */
export interface HostedRoute {
  job: HostedJob;
  integration: ResolvedIntegration;
}

/** The notification announcing a change to a workspace's jobs, integrations or partials (hosted_change_notifications migration). */
export const hostedChange = (workspaceId: string) => `hosted:${workspaceId}`;
const PAYLOAD_PREFIX = 'hosted:';
/** How long the author of a change waits for every replica to have dropped the workspace's entries. */
const ANNOUNCE_WAIT_MS = 2000;

const keyOf = (workspaceId: string, name: string) => `${workspaceId}\n${name}`;

/**
 * Hosted chat's resolution of `model` (job → integration → decrypted credentials) and its `{{>slug}}`
 * partial texts, by workspace, so a warm call runs no SQL statement and decrypts nothing. The
 * credentials stay in this process's memory only. Like the API key cache it only serves while
 * invalidations are known to arrive (`setActive`): a replica that cannot hear a change must not answer
 * from memory. Any change to a workspace's jobs, integrations or partials drops all its entries.
 */
export class HostedCache implements WorkspaceChanges {
  private readonly routes?: LRUCache<string, HostedRoute>;
  private readonly texts?: LRUCache<string, string>;
  private readonly integrations?: LRUCache<string, ResolvedIntegration>;
  /** Bumped by every invalidation: a read that began before one must not store what it read. */
  private generation = 0;
  private readonly waiters = new NotificationWaiters();

  constructor(
    options: HostedCacheOptions,
    private active: boolean,
  ) {
    const { maxEntries, maxPartialChars, ttlMs } = options;
    if (ttlMs <= 0) return;
    if (maxEntries > 0) this.routes = new LRUCache({ max: maxEntries, ttl: ttlMs });
    if (maxEntries > 0) this.integrations = new LRUCache({ max: maxEntries, ttl: ttlMs });
    // A text's size is its length, at least 1 (lru-cache refuses 0); a text beyond the bound is not kept.
    if (maxPartialChars > 0) this.texts = new LRUCache({ maxSize: maxPartialChars, sizeCalculation: (text) => Math.max(text.length, 1), ttl: ttlMs });
  }

  get isActive(): boolean {
    return this.active;
  }

  /** The route of `model` in the workspace: from memory, or `load`ed (and kept unless a change came in meanwhile). */
  async route(workspaceId: string, model: string, load: () => Promise<HostedRoute>): Promise<HostedRoute> {
    const key = keyOf(workspaceId, model);
    const cached = this.active ? this.routes?.get(key) : undefined;
    if (cached) return cached;
    const token = this.generation;
    const route = await load();
    if (this.active && token === this.generation) this.routes?.set(key, route);
    return route;
  }

  /** The integration `ref` names in the workspace (client mode's `@slug`, a batch's every line): from memory, or `load`ed. */
  async integration(workspaceId: string, ref: string, load: () => Promise<ResolvedIntegration>): Promise<ResolvedIntegration> {
    const key = keyOf(workspaceId, ref);
    const cached = this.active ? this.integrations?.get(key) : undefined;
    if (cached) return cached;
    const token = this.generation;
    const integration = await load();
    if (this.active && token === this.generation) this.integrations?.set(key, integration);
    return integration;
  }

  /** The default texts of `slugs` in the workspace (missing ones left out); only those not in memory are `load`ed. */
  async partialTexts(workspaceId: string, slugs: readonly string[], load: (slugs: string[]) => Promise<Map<string, string>>): Promise<Map<string, string>> {
    const texts = new Map<string, string>();
    const missing: string[] = [];
    for (const slug of slugs) {
      const text = this.active ? this.texts?.get(keyOf(workspaceId, slug)) : undefined;
      if (text === undefined) missing.push(slug);
      else texts.set(slug, text);
    }
    if (!missing.length) return texts;
    const token = this.generation;
    const loaded = await load(missing);
    for (const [slug, text] of loaded) {
      texts.set(slug, text);
      if (this.active && token === this.generation) this.texts?.set(keyOf(workspaceId, slug), text);
    }
    return texts;
  }

  /** Whether a notification's payload is about this cache (the channel is shared with the API key cache). */
  handles(payload: string): boolean {
    return payload.startsWith(PAYLOAD_PREFIX);
  }

  applyNotification(payload: string): void {
    this.dropWorkspace(payload.slice(PAYLOAD_PREFIX.length));
  }

  isAwaited(payload: string): boolean {
    return this.waiters.isAwaited(payload);
  }

  delivered(payload: string): void {
    this.waiters.delivered(payload);
  }

  async announce<T>(workspaceId: string, change: () => Promise<T>, wrote: (result: T) => boolean = () => true): Promise<T> {
    const notification = this.waiters.whenHeard(hostedChange(workspaceId), ANNOUNCE_WAIT_MS, this.active);
    let result: T;
    try {
      result = await change();
    } catch (err) {
      notification.cancel();
      throw err;
    } finally {
      this.dropWorkspace(workspaceId);
    }
    if (!wrote(result)) notification.cancel();
    await notification.heard;
    return result;
  }

  /** Turned off, the cache forgets everything: invalidations sent meanwhile would not reach it. */
  setActive(active: boolean): void {
    this.active = active;
    if (active) return;
    this.generation++;
    this.routes?.clear();
    this.texts?.clear();
    this.integrations?.clear();
  }

  private dropWorkspace(workspaceId: string): void {
    this.generation++;
    const prefix = keyOf(workspaceId, '');
    for (const cache of [this.routes, this.texts, this.integrations]) {
      for (const key of [...(cache?.keys() ?? [])]) if (key.startsWith(prefix)) cache?.delete(key);
    }
  }
}

/** `source`'s `resolve`, answered from `cache` while it serves (client mode's `@slug`: a warm call runs no statement). */
export function cachedResolve(source: Pick<IntegrationSource, 'resolve'>, cache: HostedCache): Pick<IntegrationSource, 'resolve'> {
  return { resolve: (scope, ref, path) => cache.integration(scope.workspaceId, ref, () => source.resolve(scope, ref, path)) };
}
