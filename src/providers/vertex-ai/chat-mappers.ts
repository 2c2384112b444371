/**
 * OpenAI's chat request and answer ↔ Gemini's `generateContent`: system and developer messages
 * become the system instruction, user turns `user`, assistant turns `model`; the options go into
 * `generationConfig`; the candidate's text parts make the answer and its finish reason and token
 * counts map onto OpenAI's.
 */
import { randomBytes } from 'node:crypto';
import { invalidField } from '../../errors';
import { maxTokensOf, stopSequencesOf, textOf } from '../chat-request';
import type { ChatCompletion, ChatRequest, ChatUsage, FinishReason } from '../types';
import { unixSeconds, type GenerateContentResponse } from './wire';

const FINISH_REASONS: Readonly<Record<string, FinishReason>> = {
  STOP: 'stop',
  MAX_TOKENS: 'length',
  SAFETY: 'content_filter',
  RECITATION: 'content_filter',
  BLOCKLIST: 'content_filter',
  PROHIBITED_CONTENT: 'content_filter',
  SPII: 'content_filter',
  IMAGE_SAFETY: 'content_filter',
};

const text = (content: string) => [{ text: content }];

/** The request body of generateContent / streamGenerateContent. */
export function toGenerateRequest(request: ChatRequest): Record<string, unknown> {
  const system: { text: string }[] = [];
  const contents: { role: 'user' | 'model'; parts: { text: string }[] }[] = [];
  const { body } = request;
  body.messages.forEach((message, i) => {
    if (message.role === 'system' || message.role === 'developer') system.push(...text(textOf(message.content)));
    else if (message.role === 'user') contents.push({ role: 'user', parts: text(textOf(message.content)) });
    else if (message.role === 'assistant') contents.push({ role: 'model', parts: text(textOf(message.content)) });
    else throw invalidField(['messages', i, 'role'], 'cannot be "tool" with Vertex AI through the gateway (no tool calls)');
  });
  if (contents.length === 0) throw invalidField('messages', 'must hold at least one user message');
  const config = {
    maxOutputTokens: maxTokensOf(body),
    temperature: body.temperature ?? undefined,
    topP: body.top_p ?? undefined,
    stopSequences: stopSequencesOf(body),
    seed: body.seed ?? undefined,
  };
  const generationConfig = Object.fromEntries(Object.entries(config).filter(([, value]) => value !== undefined));
  return {
    contents,
    ...(system.length ? { systemInstruction: { parts: system } } : {}),
    ...(Object.keys(generationConfig).length ? { generationConfig } : {}),
  };
}

/** The text of a response's first candidate (a streamed response holds a piece of it). */
export const answerText = (response: GenerateContentResponse) => (response.candidates?.[0]?.content?.parts ?? []).map((part) => part.text ?? '').join('');

/** Why the answer ended, if this response says; a prompt blocked before any candidate is a content filter. */
export function finishReason(response: GenerateContentResponse): FinishReason | null {
  const reason = response.candidates?.[0]?.finishReason;
  if (reason !== undefined) return FINISH_REASONS[reason] ?? 'stop';
  return response.promptFeedback?.blockReason ? 'content_filter' : null;
}

export function toUsage(response: GenerateContentResponse): ChatUsage | null {
  const usage = response.usageMetadata;
  if (!usage) return null;
  const promptTokens = usage.promptTokenCount ?? 0;
  const completionTokens = usage.candidatesTokenCount ?? 0;
  return { promptTokens, completionTokens, totalTokens: usage.totalTokenCount ?? promptTokens + completionTokens };
}

export const completionId = (responseId?: string) => `chatcmpl-${responseId ?? randomBytes(12).toString('hex')}`;

export function toCompletion(model: string, response: GenerateContentResponse): ChatCompletion {
  return {
    id: completionId(response.responseId),
    model,
    created: response.createTime ? unixSeconds(response.createTime) : Math.floor(Date.now() / 1000),
    choices: [{ index: 0, content: answerText(response), refusal: null, toolCalls: [], finishReason: finishReason(response), logprobs: null }],
    usage: toUsage(response),
  };
}
