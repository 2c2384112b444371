/** Pieces of OpenAI's wire format shared by the files, fine-tuning and integration mappers. */

/** OpenAI times are Unix seconds. */
export const unixSeconds = (date: Date) => Math.floor(date.getTime() / 1000);
export const unixOrNull = (date: Date | null) => (date ? unixSeconds(date) : null);

export interface Page<T> {
  items: T[];
  hasMore: boolean;
}

/** `{object: "list", data, has_more}`. */
export function listJson<T, J>(page: Page<T>, toJson: (item: T) => J) {
  return { object: 'list' as const, data: page.items.map(toJson), has_more: page.hasMore };
}

/** The list shape with `first_id` / `last_id` (files, checkpoints). */
export function cursorListJson<T, J extends { id: string }>(page: Page<T>, toJson: (item: T) => J) {
  const data = page.items.map(toJson);
  return { object: 'list' as const, data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: page.hasMore };
}
