import type { Caller, Scope } from '../auth/scope';
import { createFineTuningLoaders, type FineTuningLoaders } from '../modules/fine-tuning/fine-tuning.loaders';
import { createPartialLoaders, type PartialLoaders } from '../modules/partials/partial.loaders';
import type { Services } from '../services';

/** Per-request GraphQL context: the caller, the services, and request-scoped helpers. */
export interface GraphQLContext {
  caller: Caller;
  services: Services;
  /** The tenant scope for an optional workspace UUID or slug (see WorkspaceService.resolveScope). */
  scope(workspaceRef?: string | null): Promise<Scope>;
  /** Per-request DataLoaders, one group per domain; their keys include the scope. */
  loaders: Loaders;
}

export interface Loaders {
  partials: PartialLoaders;
  fineTuning: FineTuningLoaders;
}

export function createContext(services: Services, caller: Caller): GraphQLContext {
  const scopes = new Map<string, Promise<Scope>>();
  const loaders: Loaders = {
    partials: createPartialLoaders(services),
    fineTuning: createFineTuningLoaders(services),
  };
  return {
    caller,
    services,
    loaders,
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
