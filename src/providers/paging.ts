/**
 * Paging for lists a provider returns whole (Together's jobs, events and checkpoints; events and
 * checkpoints an adapter synthesises): the gateway pages them itself with OpenAI's cursor, the id of
 * the last item seen, so callers page every provider the same way.
 */
import { invalidField } from '../errors';
import type { PageInput, ProviderPage } from './types';

/** The items after `page.after` (an item id), at most `page.limit` of them (all when unset), in the given order. */
export function pageOf<T extends { id: string }>(items: readonly T[], page: PageInput): ProviderPage<T> {
  let start = 0;
  if (page.after !== undefined) {
    const at = items.findIndex((item) => item.id === page.after);
    if (at < 0) throw invalidField('after', `no item of this list has the id '${page.after}'`, 'invalid_cursor');
    start = at + 1;
  }
  const end = page.limit === undefined ? items.length : start + page.limit;
  const data = items.slice(start, end);
  return { data, hasMore: end < items.length, nextAfter: data.at(-1)?.id ?? null };
}
