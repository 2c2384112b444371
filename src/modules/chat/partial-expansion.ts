/**
 * Prompt partials in chat messages (api.md §9): `{{>slug}}` is replaced by the default version of
 * that partial of the workspace, in one pass (a partial's text is not expanded again, so partials
 * cannot recurse). `{{` without `>` is left as it is.
 */
import { invalidField } from '../../errors';
import type { ChatMessage } from '../../providers/types';

const PARTIAL = /\{\{>\s*([A-Za-z0-9_-]+)\s*\}\}/g;

/** Every slug the messages name, once each. */
export function partialSlugs(messages: readonly ChatMessage[]): string[] {
  return [...new Set(messages.flatMap((m) => [...m.content.matchAll(PARTIAL)].map((match) => match[1])))];
}

/** The messages with each `{{>slug}}` replaced by its text; a slug without one is a 400 naming it. */
export function expandPartials(messages: readonly ChatMessage[], texts: ReadonlyMap<string, string>): ChatMessage[] {
  return messages.map((message, i) => ({
    ...message,
    content: message.content.replace(PARTIAL, (_, slug: string) => {
      const text = texts.get(slug);
      if (text === undefined)
        throw invalidField(['messages', i, 'content'], `names the prompt partial '${slug}', which this workspace does not have`, 'partial_not_found');
      return text;
    }),
  }));
}
