/** The contract's chat answers in OpenAI's wire shapes: `chat.completion` and `chat.completion.chunk`. */
import type { ChatChoice, ChatChunk, ChatCompletion, ChatLogprobs, ChatToolCall, ChatUsage, ToolCallDelta, TokenLogprob } from '../../providers/types';

const usageJson = (usage: ChatUsage) => ({
  prompt_tokens: usage.promptTokens,
  completion_tokens: usage.completionTokens,
  total_tokens: usage.totalTokens,
  ...(usage.promptTokensDetails ? { prompt_tokens_details: usage.promptTokensDetails } : {}),
  ...(usage.completionTokensDetails ? { completion_tokens_details: usage.completionTokensDetails } : {}),
});

const tokensJson = (tokens: TokenLogprob[] | null) =>
  tokens?.map((t) => ({ token: t.token, logprob: t.logprob, bytes: t.bytes, top_logprobs: t.topLogprobs })) ?? null;

const logprobsJson = (logprobs: ChatLogprobs | null | undefined) =>
  logprobs ? { content: tokensJson(logprobs.content), refusal: tokensJson(logprobs.refusal) } : null;

/** A call of the answer in OpenAI's shape (GraphQL's `ChatToolCall` is the same). */
export const toolCallJson = (call: ChatToolCall) => ({ id: call.id, type: 'function' as const, function: { name: call.name, arguments: call.arguments } });

/** Why the choice ended; a provider that does not say ended it by calling tools or by stopping. */
export const finishReasonOf = (c: ChatChoice) => c.finishReason ?? (c.toolCalls.length ? 'tool_calls' : 'stop');

const choiceJson = (c: ChatChoice) => ({
  index: c.index,
  message: {
    role: 'assistant' as const,
    content: c.content,
    refusal: c.refusal,
    ...(c.toolCalls.length ? { tool_calls: c.toolCalls.map(toolCallJson) } : {}),
  },
  logprobs: logprobsJson(c.logprobs),
  finish_reason: finishReasonOf(c),
});

export const toCompletionJson = (c: ChatCompletion) => ({
  id: c.id,
  object: 'chat.completion' as const,
  created: c.created,
  model: c.model,
  choices: c.choices.map(choiceJson),
  // OpenAI's `usage` is an object when present, never null.
  ...(c.usage ? { usage: usageJson(c.usage) } : {}),
  ...(c.serviceTier ? { service_tier: c.serviceTier } : {}),
  ...(c.systemFingerprint ? { system_fingerprint: c.systemFingerprint } : {}),
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
