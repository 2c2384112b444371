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
import type { ChatRequestMessage } from '../../providers/chat-request';

const PARTIAL = /\{\{>\s*([A-Za-z0-9_-]+)\s*\}\}/g;

/** Characters (UTF-16 code units, as JavaScript counts them) a chat request may hold once partials are expanded. */
export interface ExpansionLimits {
  /** One message's text. */
  maxMessageChars: number;
  /** All messages of a request together. */
  maxRequestChars: number;
}

/**
 * A message's text: its string content or its text parts. Partials are expanded there only, never in
 * tool-call arguments, refusals or JSON schemas (which are data, not prompt text).
 */
const textsOf = (message: ChatRequestMessage): string[] =>
  typeof message.content === 'string' ? [message.content] : (message.content ?? []).flatMap((part) => (part.type === 'text' ? [part.text] : []));

/** The message with `expand` applied to each of its texts. */
function withTexts(message: ChatRequestMessage, expand: (text: string) => string): ChatRequestMessage {
  if (typeof message.content === 'string') return { ...message, content: expand(message.content) };
  if (!message.content) return message;
  const content = message.content.map((part) => (part.type === 'text' ? { ...part, text: expand(part.text) } : part));
  return { ...message, content } as ChatRequestMessage;
}

/** Every slug the messages name, once each. */
export function partialSlugs(messages: readonly ChatRequestMessage[]): string[] {
  return [...new Set(messages.flatMap((m) => textsOf(m).flatMap((text) => [...text.matchAll(PARTIAL)].map((match) => match[1]))))];
}

/**
 * The messages with each `{{>slug}}` replaced by its text; a slug without one is a 400 naming it, an
 * expansion beyond `limits` a 413 naming the message (or the messages), before anything is built.
 */
export function expandPartials(messages: readonly ChatRequestMessage[], texts: ReadonlyMap<string, string>, limits: ExpansionLimits): ChatRequestMessage[] {
  let total = 0;
  messages.forEach((message, i) => {
    const size = textsOf(message).reduce((sum, text) => sum + expandedSize(text, texts, i), 0);
    if (size > limits.maxMessageChars) throw tooLarge(['messages', i, 'content'], size, limits.maxMessageChars, 'a message');
    total += size;
  });
  if (total > limits.maxRequestChars) throw tooLarge(['messages'], total, limits.maxRequestChars, 'the messages of a request');
  return messages.map((message, i) => withTexts(message, (text) => text.replace(PARTIAL, (_, slug: string) => textOf(texts, slug, i))));
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
