/**
 * OpenAI's chat answer as the providers that speak its wire format send it (OpenAI, Azure OpenAI,
 * Fireworks AI, Together AI): the schemas the gateway reads a `chat.completion` or a
 * `chat.completion.chunk` with, and their usage and finish reasons in the contract's terms. Shared by
 * the whole answer (chat.ts) and the relayed stream (relay.ts).
 */
import { z } from 'zod';
import { GatewayError } from '../../errors';
import type { ApiEndpoint } from '../api';
import { redactText } from '../redact';
import type { ChatUsage, FinishReason } from '../types';

const count = z.number().int().nonnegative();
const wireUsage = z.object({
  prompt_tokens: count.optional(),
  completion_tokens: count.optional(),
  total_tokens: count.optional(),
  prompt_tokens_details: z.record(count.nullish()).nullish(),
  completion_tokens_details: z.record(count.nullish()).nullish(),
});

const wireTopLogprob = z.object({ token: z.string(), logprob: z.number(), bytes: z.array(z.number()).nullish() });
const wireTokenLogprob = wireTopLogprob.extend({ top_logprobs: z.array(wireTopLogprob).nullish() });
const wireLogprobs = z.object({ content: z.array(wireTokenLogprob).nullish(), refusal: z.array(wireTokenLogprob).nullish() });

const wireToolCall = z.object({
  index: z.number().int().nonnegative().optional(),
  id: z.string().nullish(),
  function: z.object({ name: z.string().nullish(), arguments: z.string().nullish() }).optional(),
});

const wireMessage = z.object({ content: z.string().nullish(), refusal: z.string().nullish(), tool_calls: z.array(wireToolCall).nullish() });

const wireChoice = z.object({
  index: z.number().int().nonnegative().optional(),
  message: wireMessage.optional(),
  delta: wireMessage.optional(),
  finish_reason: z.string().nullish(),
  logprobs: wireLogprobs.nullish(),
});

/** A `chat.completion`, or one `chat.completion.chunk` of a stream (only the fields read; others pass). */
export const wireCompletion = z.object({
  id: z.string().optional(),
  model: z.string().optional(),
  created: z.number().optional(),
  choices: z.array(wireChoice).optional(),
  usage: wireUsage.nullish(),
  service_tier: z.string().nullish(),
  system_fingerprint: z.string().nullish(),
  /** Some providers report a failure inside an open stream. */
  error: z.union([z.string(), z.object({ message: z.string().optional() })]).optional(),
});

export type WireCompletion = z.infer<typeof wireCompletion>;
type WireUsage = z.infer<typeof wireUsage>;
export type WireChoice = z.infer<typeof wireChoice>;
export type WireLogprobs = z.infer<typeof wireLogprobs>;
export type WireTokenLogprob = z.infer<typeof wireTokenLogprob>;

const FINISH_REASONS: Readonly<Record<string, FinishReason>> = {
  stop: 'stop',
  eos: 'stop',
  length: 'length',
  content_filter: 'content_filter',
  tool_calls: 'tool_calls',
  function_call: 'tool_calls',
};

export const toFinishReason = (reason: string | null | undefined): FinishReason | null => (reason ? (FINISH_REASONS[reason] ?? 'stop') : null);

/** Counts only: a detail the provider reports as null is left out. */
const counts = (details: Record<string, number | null | undefined> | null | undefined) =>
  details ? Object.fromEntries(Object.entries(details).filter((e): e is [string, number] => typeof e[1] === 'number')) : undefined;

export function toUsage(usage: WireUsage | null | undefined): ChatUsage | null {
  if (!usage) return null;
  const promptTokens = usage.prompt_tokens ?? 0;
  const completionTokens = usage.completion_tokens ?? 0;
  const promptTokensDetails = counts(usage.prompt_tokens_details);
  const completionTokensDetails = counts(usage.completion_tokens_details);
  return {
    promptTokens,
    completionTokens,
    totalTokens: usage.total_tokens ?? promptTokens + completionTokens,
    ...(promptTokensDetails ? { promptTokensDetails } : {}),
    ...(completionTokensDetails ? { completionTokensDetails } : {}),
  };
}

/** A failure the provider reported inside an open stream (`error` in a chunk), its message scrubbed of the endpoint's secrets. */
export function streamFailure(error: NonNullable<WireCompletion['error']>, { title, secrets }: ApiEndpoint): GatewayError {
  const message = typeof error === 'string' ? error : (error.message ?? 'unknown error');
  return new GatewayError('provider', `${title} failed while streaming: ${redactText(message, secrets)}`, { status: 502 });
}
