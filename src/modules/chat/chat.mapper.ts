/** The contract's chat answers in OpenAI's wire shapes: `chat.completion` and `chat.completion.chunk`. */
import type { ChatChunk, ChatCompletion, ChatUsage } from '../../providers/types';

const usageJson = (usage: ChatUsage) => ({ prompt_tokens: usage.promptTokens, completion_tokens: usage.completionTokens, total_tokens: usage.totalTokens });

export const toCompletionJson = (c: ChatCompletion) => ({
  id: c.id,
  object: 'chat.completion' as const,
  created: c.created,
  model: c.model,
  choices: [{ index: 0, message: { role: 'assistant' as const, content: c.content, refusal: null }, logprobs: null, finish_reason: c.finishReason ?? 'stop' }],
  // OpenAI's `usage` is an object when present, never null.
  ...(c.usage ? { usage: usageJson(c.usage) } : {}),
});

/** What every chunk of one stream repeats. */
export interface StreamHead {
  id: string;
  model: string;
  created: number;
}

const chunkJson = (head: StreamHead, choices: unknown[], extra: Record<string, unknown> = {}) => ({
  id: head.id,
  object: 'chat.completion.chunk' as const,
  created: head.created,
  model: head.model,
  choices,
  ...extra,
});

const choice = (delta: Record<string, unknown>, finishReason: string | null) => ({ index: 0, delta, logprobs: null, finish_reason: finishReason });

/** The first chunk, as OpenAI sends it: the role, no text yet. */
export const roleChunkJson = (head: StreamHead) => chunkJson(head, [choice({ role: 'assistant', content: '' }, null)]);

/**
 * One of the contract's chunks as OpenAI's; a usage chunk has no choices and is sent only when the
 * caller asked for it (`stream_options.include_usage`), else null.
 */
export function toChunkJson(head: StreamHead, chunk: ChatChunk, includeUsage: boolean) {
  switch (chunk.type) {
    case 'delta':
      return chunkJson(head, [choice({ content: chunk.content }, null)]);
    case 'finish':
      return chunkJson(head, [choice({}, chunk.finishReason)]);
    case 'usage':
      return includeUsage ? chunkJson(head, [], { usage: usageJson(chunk.usage) }) : null;
  }
}
