/**
 * Chat through the Bedrock runtime's Converse and ConverseStream. A custom model answers only
 * through a custom model deployment or provisioned throughput: its ARN comes in
 * `x-gateway-aws-bedrock-model`; without it, asking a hosted job's custom model is
 * `deployment_required`, while client mode passes the ARN on and relays Bedrock's answer. Other
 * models (foundation models, inference profiles) are called by their id. System and developer
 * messages become Converse's `system`; consecutive messages of one role share a turn (Converse wants
 * turns to alternate).
 */
import { randomUUID } from 'node:crypto';
import {
  ConverseCommand,
  ConverseStreamCommand,
  type ContentBlock,
  type ConverseStreamOutput,
  type Message,
  type SystemContentBlock,
  type TokenUsage,
} from '@aws-sdk/client-bedrock-runtime';
import { GatewayError, invalidField } from '../../errors';
import { maxTokensOf, stopSequencesOf, textOf, type ChatRequestMessage } from '../chat-request';
import type { ChatAnswer, ChatChunk, ChatRequest, ChatUsage, FinishReason } from '../types';
import type { BedrockConnection } from './connection';

const CUSTOM_MODEL_ARN = /^arn:aws(?:-[a-z]+)*:bedrock:[a-z0-9-]*:\d{12}:custom-model\//;

const FINISH: Readonly<Record<string, FinishReason>> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  content_filtered: 'content_filter',
  guardrail_intervened: 'content_filter',
  tool_use: 'tool_calls',
};

/** What Converse is called with: the serving deployment when there is one, else the requested model (a hosted job's needs one). */
function modelIdFor(conn: BedrockConnection, request: ChatRequest): string {
  if (conn.servingModel) return conn.servingModel;
  if (!request.hosted || !CUSTOM_MODEL_ARN.test(request.model)) return request.model;
  throw new GatewayError(
    'invalid_request',
    `Amazon Bedrock serves the custom model ${request.model} only through a custom model deployment or provisioned throughput: ` +
      'create one for it and pass its ARN in x-gateway-aws-bedrock-model',
    { param: 'x-gateway-aws-bedrock-model', code: 'deployment_required' },
  );
}

function conversation(messages: ChatRequestMessage[]): { system: SystemContentBlock[]; turns: Message[] } {
  const system: SystemContentBlock[] = [];
  const turns: Array<{ role: 'user' | 'assistant'; content: ContentBlock[] }> = [];
  messages.forEach((message, i) => {
    const text = textOf(message.content);
    if (message.role === 'system' || message.role === 'developer') return void system.push({ text });
    if (message.role === 'tool') throw invalidField(['messages', i, 'role'], 'tool messages cannot be sent to Amazon Bedrock through the gateway');
    const last = turns.at(-1);
    if (last?.role === message.role) last.content.push({ text });
    else turns.push({ role: message.role, content: [{ text }] });
  });
  return { system, turns };
}

function converseInput(conn: BedrockConnection, request: ChatRequest) {
  const { body } = request;
  const { system, turns } = conversation(body.messages);
  const inferenceConfig = {
    maxTokens: maxTokensOf(body),
    temperature: body.temperature ?? undefined,
    topP: body.top_p ?? undefined,
    stopSequences: stopSequencesOf(body),
  };
  return {
    modelId: modelIdFor(conn, request),
    messages: turns,
    ...(system.length ? { system } : {}),
    ...(Object.values(inferenceConfig).some((v) => v !== undefined) ? { inferenceConfig } : {}),
  };
}

const usageOf = (u: TokenUsage | undefined): ChatUsage | null =>
  u
    ? { promptTokens: u.inputTokens ?? 0, completionTokens: u.outputTokens ?? 0, totalTokens: u.totalTokens ?? (u.inputTokens ?? 0) + (u.outputTokens ?? 0) }
    : null;

const finishOf = (reason: string | undefined): FinishReason => FINISH[reason ?? ''] ?? 'stop';

/** Chunks as the stream brings them; an error event (or a broken stream) ends them with the provider error. */
async function* chunksOf(conn: BedrockConnection, stream: AsyncIterable<ConverseStreamOutput>): AsyncGenerator<ChatChunk> {
  try {
    for await (const event of stream) {
      const text = event.contentBlockDelta?.delta?.text;
      const usage = usageOf(event.metadata?.usage);
      if (text) yield { type: 'delta', content: text };
      else if (event.messageStop) yield { type: 'finish', finishReason: finishOf(event.messageStop.stopReason) };
      else if (usage) yield { type: 'usage', usage };
    }
  } catch (err) {
    throw conn.failure('Amazon Bedrock', err);
  }
}

export async function chat(conn: BedrockConnection, request: ChatRequest): Promise<ChatAnswer> {
  const input = converseInput(conn, request);
  const created = Math.floor(Date.now() / 1000);
  const options = { abortSignal: request.signal };
  if (request.body.stream) {
    const answer = await conn.call('Amazon Bedrock', () => conn.runtime().send(new ConverseStreamCommand(input), options));
    if (!answer.stream) throw new GatewayError('provider', 'Amazon Bedrock answered without a stream', { status: 502 });
    return { stream: true, id: `chatcmpl-${answer.$metadata.requestId ?? randomUUID()}`, model: request.model, created, chunks: chunksOf(conn, answer.stream) };
  }
  const answer = await conn.call('Amazon Bedrock', () => conn.runtime().send(new ConverseCommand(input), options));
  const content = (answer.output?.message?.content ?? []).map((block) => block.text ?? '').join('');
  return {
    stream: false,
    completion: {
      id: `chatcmpl-${answer.$metadata.requestId ?? randomUUID()}`,
      model: request.model,
      created,
      choices: [{ index: 0, content, refusal: null, toolCalls: [], finishReason: answer.stopReason ? finishOf(answer.stopReason) : null, logprobs: null }],
      usage: usageOf(answer.usage),
    },
  };
}
