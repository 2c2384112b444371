import DataLoader from 'dataloader';
import type { Scope } from '../auth/scope';

/** A DataLoader key: the id of an object and the scope it must be read in. */
export interface ScopedKey {
  scope: Scope;
  id: string;
}

const scopeKey = (scope: Scope) => `${scope.organisationId}/${scope.workspaceId}`;

/**
 * A per-request DataLoader over scoped keys: the keys of one tick are grouped by scope and each group
 * is read with one batched query, `load(scope, ids)`, whose result maps id → value. Ids the query did
 * not return get `missing(id)`.
 */
export function scopedLoader<V>(
  load: (scope: Scope, ids: string[]) => Promise<Map<string, V>>,
  missing: (id: string) => V | Error,
): DataLoader<ScopedKey, V, string> {
  return new DataLoader<ScopedKey, V, string>(
    async (keys) => {
      const groups = new Map<string, { scope: Scope; ids: Set<string> }>();
      for (const { scope, id } of keys) {
        const key = scopeKey(scope);
        let group = groups.get(key);
        if (!group) groups.set(key, (group = { scope, ids: new Set() }));
        group.ids.add(id);
      }
      const results = new Map<string, Map<string, V>>();
      await Promise.all(
        [...groups].map(async ([key, group]) => {
          results.set(key, await load(group.scope, [...group.ids]));
        }),
      );
      return keys.map(({ scope, id }) => results.get(scopeKey(scope))?.get(id) ?? missing(id));
    },
    { cacheKeyFn: ({ scope, id }) => `${scopeKey(scope)}/${id}` },
  );
}
