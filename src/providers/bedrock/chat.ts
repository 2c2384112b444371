/**
 * Chat through the Bedrock runtime's Converse and ConverseStream. A custom model answers only
 * through a custom model deployment or provisioned throughput: its ARN comes in
 * `x-gateway-aws-bedrock-model`; without it, asking a hosted job's custom model is
 * `deployment_required`, while client mode passes the ARN on and relays Bedrock's answer. Other
 * models (foundation models, inference profiles) are called by their id. The request and answer
 * are translated in ./chat-mappers.ts; streamed `toolUse` blocks become OpenAI's tool-call deltas.
 */
import { randomUUID } from 'node:crypto';
import { ConverseCommand, ConverseStreamCommand, type ConverseStreamOutput, type TokenUsage } from '@aws-sdk/client-bedrock-runtime';
import { GatewayError } from '../../errors';
import type { ChatAnswer, ChatChunk, ChatRequest, ChatUsage, FinishReason } from '../types';
import { answerOf, toConverse } from './chat-mappers';
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

export function usageOf(u: TokenUsage | undefined): ChatUsage | null {
  if (!u) return null;
  const promptTokens = u.inputTokens ?? 0;
  const completionTokens = u.outputTokens ?? 0;
  const cached = u.cacheReadInputTokens;
  return {
    promptTokens,
    completionTokens,
    totalTokens: u.totalTokens ?? promptTokens + completionTokens,
    ...(cached !== undefined ? { promptTokensDetails: { cached_tokens: cached } } : {}),
  };
}

/** OpenAI's finish reason; the forced tool of JSON mode ends an answer, not a tool call. */
export const finishOf = (reason: string | undefined, jsonMode: boolean): FinishReason =>
  jsonMode && reason === 'tool_use' ? 'stop' : (FINISH[reason ?? ''] ?? 'stop');

/**
 * Chunks as the stream brings them: text deltas, and each `toolUse` block as a tool call (its id and
 * name first, then its input's JSON in pieces) or, for JSON mode's forced tool, as text. An error event
 * (or a broken stream) ends them with the provider error. However they end, `hangUp` is aborted:
 * a consumer that stops reading must not leave the runtime's stream (and its billing) running.
 */
async function* chunksOf(
  conn: BedrockConnection,
  stream: AsyncIterable<ConverseStreamOutput>,
  jsonTool: string | undefined,
  hangUp: AbortController,
): AsyncGenerator<ChatChunk> {
  /** Tool-call index by content block; JSON mode's block is -1. */
  const calls = new Map<number, number>();
  try {
    for await (const event of stream) {
      const start = event.contentBlockStart;
      const use = start?.start?.toolUse;
      if (start && use) {
        const index = use.name === jsonTool ? -1 : calls.size;
        calls.set(start.contentBlockIndex ?? 0, index);
        if (index >= 0) yield { type: 'delta', toolCalls: [{ index, id: use.toolUseId, name: use.name, arguments: '' }] };
        continue;
      }
      const delta = event.contentBlockDelta;
      const input = delta?.delta?.toolUse?.input;
      const call = calls.get(delta?.contentBlockIndex ?? 0);
      const usage = usageOf(event.metadata?.usage);
      if (delta?.delta?.text) yield { type: 'delta', content: delta.delta.text };
      else if (input !== undefined && call !== undefined)
        yield call < 0 ? { type: 'delta', content: input } : { type: 'delta', toolCalls: [{ index: call, arguments: input }] };
      else if (event.messageStop) yield { type: 'finish', finishReason: finishOf(event.messageStop.stopReason, jsonTool !== undefined) };
      else if (usage) yield { type: 'usage', usage };
    }
  } catch (err) {
    throw conn.failure('Amazon Bedrock', err);
  } finally {
    hangUp.abort();
  }
}

export async function chat(conn: BedrockConnection, request: ChatRequest): Promise<ChatAnswer> {
  const { input, jsonTool } = toConverse(request.body);
  const command = { modelId: modelIdFor(conn, request), ...input };
  const created = Math.floor(Date.now() / 1000);
  const options = { abortSignal: request.signal };
  if (request.body.stream) {
    const hangUp = new AbortController();
    const streamOptions = { abortSignal: AbortSignal.any([request.signal, hangUp.signal]) };
    const answer = await conn.call('Amazon Bedrock', () => conn.runtime().send(new ConverseStreamCommand(command), streamOptions));
    if (!answer.stream) throw new GatewayError('provider', 'Amazon Bedrock answered without a stream', { status: 502 });
    const id = `chatcmpl-${answer.$metadata.requestId ?? randomUUID()}`;
    return { stream: true, id, model: request.model, created, chunks: chunksOf(conn, answer.stream, jsonTool, hangUp) };
  }
  const answer = await conn.call('Amazon Bedrock', () => conn.runtime().send(new ConverseCommand(command), options));
  const { content, toolCalls } = answerOf(answer.output?.message?.content ?? [], jsonTool);
  const finishReason = answer.stopReason ? finishOf(answer.stopReason, jsonTool !== undefined) : null;
  return {
    stream: false,
    completion: {
      id: `chatcmpl-${answer.$metadata.requestId ?? randomUUID()}`,
      model: request.model,
      created,
      choices: [{ index: 0, content: toolCalls.length && !content ? null : content, refusal: null, toolCalls, finishReason, logprobs: null }],
      usage: usageOf(answer.usage),
    },
  };
}
