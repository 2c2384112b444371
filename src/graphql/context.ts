import type { Scope } from '../auth/scope';

/**
 * Per-request values built on first use and shared by every resolver of the request: DataLoader
 * groups, entity loaders. Keyed by the function that builds them, so a module needs no registration
 * to have request-scoped loaders, and no two modules can collide.
 */
export class RequestCache<C> {
  private readonly values = new Map<(ctx: C) => unknown, unknown>();

  constructor(private readonly ctx: () => C) {}

  get<T>(create: (ctx: C) => T): T {
    if (!this.values.has(create)) this.values.set(create, create(this.ctx()));
    return this.values.get(create) as T;
  }
}

/** What the GraphQL infrastructure needs of a request's context; the application's context extends it. */
export interface TenantContext<C = unknown> {
  /** The tenant scope for an optional workspace UUID or slug, resolved once per request and reference. */
  scope(workspaceRef?: string | null): Promise<Scope>;
  /** Request-scoped loaders (see {@link RequestCache}). */
  loaders: RequestCache<C>;
}

/** Memoises scope resolution per workspace reference for one request. */
export function scopeResolver(resolve: (workspaceRef?: string | null) => Promise<Scope>): TenantContext['scope'] {
  const scopes = new Map<string, Promise<Scope>>();
  return (workspaceRef) => {
    const key = workspaceRef ?? '';
    let scope = scopes.get(key);
    if (!scope) scopes.set(key, (scope = resolve(workspaceRef)));
    return scope;
  };
}
