/** Paging over a list the adapter made itself (synthesised events, checkpoints): newest first, `after` an item's id. */
import type { PageInput, ProviderPage } from '../types';

const DEFAULT_LIMIT = 20;

/** The `limit` items after the one whose id is `after`; an unknown `after` is a stale cursor: an empty page. */
export function pageOf<T extends { id: string }>(newestFirst: T[], page: PageInput): ProviderPage<T> {
  const start = page.after === undefined ? 0 : newestFirst.findIndex((item) => item.id === page.after) + 1;
  const data = page.after !== undefined && start === 0 ? [] : newestFirst.slice(start, start + (page.limit ?? DEFAULT_LIMIT));
  return { data, hasMore: data.length > 0 && start + data.length < newestFirst.length, nextAfter: data.at(-1)?.id ?? null };
}
