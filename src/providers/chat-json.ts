/**
 * The contract's chat completion in OpenAI's wire shape (`chat.completion`): what the chat route
 * answers, and what a provider's batch results are written as (batch.ts).
 */
import type { ChatChoice, ChatCompletion, ChatLogprobs, ChatToolCall, ChatUsage, TokenLogprob } from './types';

export const usageJson = (usage: ChatUsage) => ({
  prompt_tokens: usage.promptTokens,
  completion_tokens: usage.completionTokens,
  total_tokens: usage.totalTokens,
  ...(usage.promptTokensDetails ? { prompt_tokens_details: usage.promptTokensDetails } : {}),
  ...(usage.completionTokensDetails ? { completion_tokens_details: usage.completionTokensDetails } : {}),
});

const tokensJson = (tokens: TokenLogprob[] | null) =>
  tokens?.map((t) => ({ token: t.token, logprob: t.logprob, bytes: t.bytes, top_logprobs: t.topLogprobs })) ?? null;

export const logprobsJson = (logprobs: ChatLogprobs | null | undefined) =>
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
