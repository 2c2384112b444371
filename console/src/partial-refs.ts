/** `{{>slug}}` references in a message, as the gateway expands them before a chat call (api.md §9). */
const REFERENCE = /\{\{>\s*([A-Za-z0-9_-]+)\s*\}\}/g;

export function partialSlugs(text: string): string[] {
  return [...new Set([...text.matchAll(REFERENCE)].map((m) => m[1]))];
}

/** The text with every known reference replaced by its partial's text; unknown ones stay visible. */
export function expandPartials(text: string, partials: ReadonlyMap<string, string>): string {
  return text.replace(REFERENCE, (whole, slug: string) => partials.get(slug) ?? whole);
}
