/**
 * Prompt partials in chat messages (api.md §9): `{{>slug}}` is replaced by the default version of
 * that partial of the workspace, in one pass (a partial's text is not expanded again, so partials
 * cannot recurse). `{{` without `>` is left as it is.
 *
 * A short message may name a long partial many times (24 KB of `{{>big}}` and a 100 000-character
 * partial make 300 MB), so the expanded size is computed first, from the lengths alone, and a message
 * or a request beyond its limit is refused (413) before any string is built.
 */
import { GatewayError, invalidField, type FieldPath } from '../../errors';
import type { ChatMessage } from '../../providers/types';

const PARTIAL = /\{\{>\s*([A-Za-z0-9_-]+)\s*\}\}/g;

/** Characters (UTF-16 code units, as JavaScript counts them) a chat request may hold once partials are expanded. */
export interface ExpansionLimits {
  /** One message's content. */
  maxMessageChars: number;
  /** All messages of a request together. */
  maxRequestChars: number;
}

/** Every slug the messages name, once each. */
export function partialSlugs(messages: readonly ChatMessage[]): string[] {
  return [...new Set(messages.flatMap((m) => [...m.content.matchAll(PARTIAL)].map((match) => match[1])))];
}

/**
 * The messages with each `{{>slug}}` replaced by its text; a slug without one is a 400 naming it, an
 * expansion beyond `limits` a 413 naming the message (or the messages), before anything is built.
 */
export function expandPartials(messages: readonly ChatMessage[], texts: ReadonlyMap<string, string>, limits: ExpansionLimits): ChatMessage[] {
  let total = 0;
  messages.forEach((message, i) => {
    const size = expandedSize(message.content, texts, i);
    if (size > limits.maxMessageChars) throw tooLarge(['messages', i, 'content'], size, limits.maxMessageChars, 'a message');
    total += size;
  });
  if (total > limits.maxRequestChars) throw tooLarge(['messages'], total, limits.maxRequestChars, 'the messages of a request');
  return messages.map((message, i) => ({ ...message, content: message.content.replace(PARTIAL, (_, slug: string) => textOf(texts, slug, i)) }));
}

/** The length of `content` once expanded: its literal text plus each occurrence's partial text. */
function expandedSize(content: string, texts: ReadonlyMap<string, string>, i: number): number {
  let size = content.length;
  for (const match of content.matchAll(PARTIAL)) size += textOf(texts, match[1], i).length - match[0].length;
  return size;
}

function textOf(texts: ReadonlyMap<string, string>, slug: string, i: number): string {
  const text = texts.get(slug);
  if (text === undefined)
    throw invalidField(['messages', i, 'content'], `names the prompt partial '${slug}', which this workspace does not have`, 'partial_not_found');
  return text;
}

const tooLarge = (path: FieldPath, size: number, max: number, what: string) =>
  new GatewayError('payload_too_large', `expands to ${size} characters with its prompt partials; ${what} may hold at most ${max}`, {
    path,
    aboutField: true,
    code: 'prompt_too_large',
  });
