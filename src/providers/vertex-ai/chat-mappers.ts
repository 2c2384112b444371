/**
 * OpenAI's chat request and answer ↔ Gemini's `generateContent`: system and developer messages
 * become the system instruction, user turns `user` (text, and `data:` images as `inlineData`),
 * assistant turns `model` (text, and tool calls as `functionCall` parts), tool messages
 * `functionResponse` parts of a user turn; tools become `functionDeclarations` (their JSON Schema
 * converted, ./schema.ts) with `tool_choice` as `functionCallingConfig`; the options go into
 * `generationConfig` (`n` → `candidateCount`, JSON mode → `responseMimeType`/`responseSchema`,
 * `logprobs` → `responseLogprobs`/`logprobs`). Gemini's function calls carry no id: the gateway gives
 * each a `call_…` id made from the response and its place, and finds a tool message's function by the
 * id of the call it answers, in the conversation.
 */
import { createHash, randomBytes } from 'node:crypto';
import { invalidField } from '../../errors';
import { dataUrl, maxTokensOf, stopSequencesOf, textOf, type ChatBody, type ChatRequestMessage } from '../chat-request';
import type { ChatChoice, ChatCompletion, ChatLogprobs, ChatToolCall, ChatUsage, FinishReason } from '../types';
import { toVertexSchema } from './schema';
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

type Part = Record<string, unknown>;
type Content = { role: 'user' | 'model'; parts: Part[] };
type Candidate = NonNullable<GenerateContentResponse['candidates']>[number];

const text = (value: string): Part[] => (value ? [{ text: value }] : []);

function userParts(message: Extract<ChatRequestMessage, { role: 'user' }>, i: number): Part[] {
  if (typeof message.content === 'string') return text(message.content);
  return message.content.flatMap((part, j) => {
    if (part.type === 'text') return text(part.text);
    const image = part.type === 'image_url' ? dataUrl(part.image_url.url) : null;
    if (!image) throw invalidField(['messages', i, 'content', j], 'must be text or a base64 data: URL image for Vertex AI', 'unsupported_parameter');
    return [{ inlineData: { mimeType: image.mediaType, data: image.bytes.toString('base64') } }];
  });
}

function functionCall(args: string, name: string, path: (string | number)[]): Part {
  try {
    return { functionCall: { name, args: JSON.parse(args) as unknown } };
  } catch {
    throw invalidField(path, 'must be JSON (Vertex AI takes the arguments as an object)');
  }
}

/** Each message as a turn; `names` maps the tool calls seen so far to their functions. */
function partsOf(message: ChatRequestMessage, i: number, names: Map<string, string>): Content | undefined {
  switch (message.role) {
    case 'user':
      return { role: 'user', parts: userParts(message, i) };
    case 'assistant': {
      const calls = (message.tool_calls ?? []).map((call, j) => {
        names.set(call.id, call.function.name);
        return functionCall(call.function.arguments, call.function.name, ['messages', i, 'tool_calls', j, 'function', 'arguments']);
      });
      return { role: 'model', parts: [...text(textOf(message.content ?? null) || (message.refusal ?? '')), ...calls] };
    }
    case 'tool': {
      const name = names.get(message.tool_call_id);
      if (!name) throw invalidField(['messages', i, 'tool_call_id'], 'names no tool call of an earlier assistant message');
      return { role: 'user', parts: [{ functionResponse: { name, response: { content: textOf(message.content) } } }] };
    }
    default:
      return undefined;
  }
}

function conversation(messages: ChatRequestMessage[]): { system: Part[]; contents: Content[] } {
  const system: Part[] = [];
  const contents: Content[] = [];
  const names = new Map<string, string>();
  messages.forEach((message, i) => {
    if (message.role === 'system' || message.role === 'developer') return void system.push(...text(textOf(message.content)));
    const turn = partsOf(message, i, names);
    const last = contents.at(-1);
    // Gemini wants the responses to one turn's function calls in one turn, and turns that alternate.
    if (turn && last?.role === turn.role) last.parts.push(...turn.parts);
    else if (turn) contents.push(turn);
  });
  return { system, contents };
}

function toolsOf(body: ChatBody): Record<string, unknown> {
  if (!body.tools?.length) return {};
  const functionDeclarations = body.tools.map((tool, i) => ({
    name: tool.function.name,
    ...(tool.function.description ? { description: tool.function.description } : {}),
    ...(tool.function.parameters ? { parameters: toVertexSchema(tool.function.parameters, ['tools', i, 'function', 'parameters']) } : {}),
  }));
  const choice = body.tool_choice;
  const functionCallingConfig =
    choice === 'none'
      ? { mode: 'NONE' }
      : choice === 'required'
        ? { mode: 'ANY' }
        : typeof choice === 'object'
          ? { mode: 'ANY', allowedFunctionNames: [choice.function.name] }
          : { mode: 'AUTO' };
  return { tools: [{ functionDeclarations }], toolConfig: { functionCallingConfig } };
}

function responseFormatOf(body: ChatBody): Record<string, unknown> {
  const format = body.response_format;
  if (format?.type === 'json_object') return { responseMimeType: 'application/json' };
  if (format?.type !== 'json_schema') return {};
  const schema = format.json_schema.schema;
  return { responseMimeType: 'application/json', ...(schema ? { responseSchema: toVertexSchema(schema, ['response_format', 'json_schema', 'schema']) } : {}) };
}

/** The request body of generateContent / streamGenerateContent. */
export function toGenerateRequest(body: ChatBody): Record<string, unknown> {
  const { system, contents } = conversation(body.messages);
  if (!contents.some((c) => c.role === 'user')) throw invalidField('messages', 'must hold at least one user message');
  const config = {
    maxOutputTokens: maxTokensOf(body),
    temperature: body.temperature ?? undefined,
    topP: body.top_p ?? undefined,
    stopSequences: stopSequencesOf(body),
    seed: body.seed ?? undefined,
    candidateCount: body.n ?? undefined,
    presencePenalty: body.presence_penalty ?? undefined,
    frequencyPenalty: body.frequency_penalty ?? undefined,
    responseLogprobs: body.logprobs ?? undefined,
    logprobs: body.logprobs ? (body.top_logprobs ?? undefined) : undefined,
    ...responseFormatOf(body),
  };
  const generationConfig = Object.fromEntries(Object.entries(config).filter(([, value]) => value !== undefined));
  return {
    contents,
    ...(system.length ? { systemInstruction: { parts: system } } : {}),
    ...toolsOf(body),
    ...(Object.keys(generationConfig).length ? { generationConfig } : {}),
  };
}

/** A candidate's text (a streamed response holds a piece of it); thoughts are not part of the answer. */
export const candidateText = (candidate: Candidate | undefined) =>
  (candidate?.content?.parts ?? [])
    .filter((part) => !part.thought)
    .map((part) => part.text ?? '')
    .join('');

/** A function call's id: the same for the same call of the same response, `call_` as OpenAI's. */
const callId = (responseId: string, candidate: number, position: number) =>
  `call_${createHash('sha256').update(`${responseId}/${candidate}/${position}`).digest('base64url').slice(0, 24)}`;

/** The candidate's function calls, numbered from `first` (their place among the candidate's calls). */
export function candidateCalls(candidate: Candidate | undefined, responseId: string, first = 0): ChatToolCall[] {
  const calls = (candidate?.content?.parts ?? []).flatMap((part) => (part.functionCall ? [part.functionCall] : []));
  return calls.map((call, k) => ({ id: callId(responseId, candidate?.index ?? 0, first + k), name: call.name, arguments: JSON.stringify(call.args ?? {}) }));
}

/** Log probabilities in OpenAI's shape: each chosen token with the top candidates at its place. */
export function candidateLogprobs(candidate: Candidate | undefined): ChatLogprobs | null {
  const result = candidate?.logprobsResult;
  if (!result?.chosenCandidates) return null;
  const entry = (c: { token?: string; logProbability?: number }) => ({
    token: c.token ?? '',
    logprob: c.logProbability ?? 0,
    bytes: [...Buffer.from(c.token ?? '', 'utf8')],
  });
  return {
    content: result.chosenCandidates.map((chosen, i) => ({ ...entry(chosen), topLogprobs: (result.topCandidates?.[i]?.candidates ?? []).map(entry) })),
    refusal: null,
  };
}

/** Why a candidate ended, if this response says; a prompt blocked before any candidate is a content filter. */
export function finishReason(response: GenerateContentResponse, candidate: Candidate | undefined): FinishReason | null {
  const reason = candidate?.finishReason;
  if (reason !== undefined) return FINISH_REASONS[reason] ?? 'stop';
  return response.promptFeedback?.blockReason ? 'content_filter' : null;
}

export function toUsage(response: GenerateContentResponse): ChatUsage | null {
  const usage = response.usageMetadata;
  if (!usage) return null;
  const promptTokens = usage.promptTokenCount ?? 0;
  const completionTokens = usage.candidatesTokenCount ?? 0;
  return {
    promptTokens,
    completionTokens,
    totalTokens: usage.totalTokenCount ?? promptTokens + completionTokens,
    ...(usage.cachedContentTokenCount !== undefined ? { promptTokensDetails: { cached_tokens: usage.cachedContentTokenCount } } : {}),
    ...(usage.thoughtsTokenCount !== undefined ? { completionTokensDetails: { reasoning_tokens: usage.thoughtsTokenCount } } : {}),
  };
}

export const completionId = (responseId?: string) => `chatcmpl-${responseId ?? randomBytes(12).toString('hex')}`;

function toChoice(response: GenerateContentResponse, responseId: string, candidate: Candidate, position: number): ChatChoice {
  const toolCalls = candidateCalls(candidate, responseId);
  const content = candidateText(candidate);
  const finish = finishReason(response, candidate);
  return {
    index: candidate.index ?? position,
    content: toolCalls.length && !content ? null : content,
    refusal: null,
    toolCalls,
    // Gemini ends a turn of function calls with STOP; OpenAI says tool_calls.
    finishReason: toolCalls.length && finish === 'stop' ? 'tool_calls' : finish,
    logprobs: candidateLogprobs(candidate),
  };
}

export function toCompletion(model: string, response: GenerateContentResponse): ChatCompletion {
  const responseId = response.responseId ?? randomBytes(12).toString('hex');
  const candidates = response.candidates?.length ? response.candidates : [{}];
  return {
    id: completionId(responseId),
    model,
    created: response.createTime ? unixSeconds(response.createTime) : Math.floor(Date.now() / 1000),
    choices: candidates.map((candidate, i) => toChoice(response, responseId, candidate, i)),
    usage: toUsage(response),
  };
}
