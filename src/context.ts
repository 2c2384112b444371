import type { Caller } from './auth/scope';
import { RequestCache, scopeResolver, type TenantContext } from './graphql/context';
import type { Services } from './services';

/** The GraphQL context of one request: the caller, the services, the scope, request-scoped loaders. */
export interface AppContext extends TenantContext<AppContext> {
  caller: Caller;
  services: Services;
}

export function createAppContext(services: Services, caller: Caller): AppContext {
  const ctx: AppContext = {
    caller,
    services,
    scope: scopeResolver((workspaceRef) => services.workspaces.resolveScope(caller, workspaceRef)),
    loaders: new RequestCache(() => ctx),
  };
  return ctx;
}
