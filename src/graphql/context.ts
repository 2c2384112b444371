import type { Caller, Scope } from '../auth/scope';
import type { Services } from '../services';

/** Per-request GraphQL context: the caller, the services, and request-scoped helpers. */
export interface GraphQLContext {
  caller: Caller;
  services: Services;
  /** The tenant scope for an optional workspace UUID or slug (see WorkspaceService.resolveScope). */
  scope(workspaceRef?: string | null): Promise<Scope>;
}

export function createContext(services: Services, caller: Caller): GraphQLContext {
  const scopes = new Map<string, Promise<Scope>>();
  return {
    caller,
    services,
    scope(workspaceRef) {
      const key = workspaceRef ?? '';
      let scope = scopes.get(key);
      if (!scope) {
        scope = services.workspaces.resolveScope(caller, workspaceRef);
        scopes.set(key, scope);
      }
      return scope;
    },
  };
}
