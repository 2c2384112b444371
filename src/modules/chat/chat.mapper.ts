/** The contract's chat answers in OpenAI's wire shapes: `chat.completion` (../../providers/chat-json.ts) and `chat.completion.chunk`. */
import { logprobsJson, usageJson } from '../../providers/chat-json';
import type { ChatChunk, ChatLogprobs, ToolCallDelta } from '../../providers/types';

export { finishReasonOf, toCompletionJson, toolCallJson } from '../../providers/chat-json';

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

const choice = (index: number, delta: Record<string, unknown>, finishReason: string | null, logprobs: ChatLogprobs | null = null) => ({
  index,
  delta,
  logprobs: logprobsJson(logprobs),
  finish_reason: finishReason,
});

/** The first chunk, as OpenAI sends it: each choice's role, no text yet. */
export const roleChunkJson = (head: StreamHead, choices: number) =>
  chunkJson(
    head,
    Array.from({ length: choices }, (_, index) => choice(index, { role: 'assistant', content: '' }, null)),
  );

/** OpenAI's tool-call delta: `id`, `type` and the name on a call's first piece, the arguments in pieces. */
const toolCallDeltaJson = (call: ToolCallDelta) => ({
  index: call.index,
  ...(call.id ? { id: call.id, type: 'function' as const } : {}),
  function: { ...(call.name ? { name: call.name } : {}), arguments: call.arguments ?? '' },
});

/**
 * One of the contract's chunks as OpenAI's; a usage chunk has no choices and is sent only when the
 * caller asked for it (`stream_options.include_usage`), else null.
 */
export function toChunkJson(head: StreamHead, chunk: ChatChunk, includeUsage: boolean) {
  switch (chunk.type) {
    case 'delta': {
      const delta = {
        ...(chunk.content !== undefined ? { content: chunk.content } : {}),
        ...(chunk.refusal !== undefined ? { refusal: chunk.refusal } : {}),
        ...(chunk.toolCalls ? { tool_calls: chunk.toolCalls.map(toolCallDeltaJson) } : {}),
      };
      return chunkJson(head, [choice(chunk.index ?? 0, delta, null, chunk.logprobs)]);
    }
    case 'finish':
      return chunkJson(head, [choice(chunk.index ?? 0, {}, chunk.finishReason)]);
    case 'usage':
      return includeUsage ? chunkJson(head, [], { usage: usageJson(chunk.usage) }) : null;
  }
}
