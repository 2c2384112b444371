/**
 * Chat with a tuned model (its endpoint, which Vertex serves with no compute to provision) or a
 * Google model: `generateContent`, or `streamGenerateContent?alt=sse` whose events are yielded as
 * they arrive. The caller's signal ends the provider call, and leaving the stream early closes it.
 */
import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import { GatewayError, invalidField, providerCode } from '../../errors';
import { redactText } from '../redact';
import type { ChatAnswer, ChatChunk, ChatRequest, ChatUsage, FinishReason } from '../types';
import { googleDownload, googleFetch, parentPath, VERTEX, vertexUrl, type VertexConnection } from './connection';
import { candidateCalls, candidateLogprobs, candidateText, completionId, finishReason, toCompletion, toGenerateRequest, toUsage } from './chat-mappers';
import { ENDPOINT_NAME } from './references';
import { sseData } from './sse';
import { generateContentSchema, parseAnswer, streamErrorSchema, type GenerateContentResponse } from './wire';

const MODEL_ID = /^[a-z0-9][a-z0-9.@_-]{0,127}$/;
const PUBLISHER_MODEL = /^publishers\/google\/models\/([a-z0-9][a-z0-9.@_-]{0,127})$/;

/** What `model` names: an endpoint's resource name (a tuned model), or a Google model by id. */
function target(conn: VertexConnection, model: string): string {
  if (ENDPOINT_NAME.test(model)) return model;
  const id = PUBLISHER_MODEL.exec(model)?.[1] ?? (MODEL_ID.test(model) ? model : undefined);
  if (id) return `${parentPath(conn)}/publishers/google/models/${id}`;
  throw invalidField('model', 'must be a Vertex AI endpoint (projects/…/locations/…/endpoints/…, a tuned model) or a Google model id like gemini-2.5-flash');
}

export async function chat(conn: VertexConnection, request: ChatRequest): Promise<ChatAnswer> {
  const path = target(conn, request.model);
  const json = toGenerateRequest(request.body);
  if (!request.body.stream) {
    const answer = await googleFetch(conn, VERTEX, { method: 'POST', url: vertexUrl(conn, `${path}:generateContent`), json, signal: request.signal });
    return { stream: false, completion: toCompletion(request.model, parseAnswer(generateContentSchema, answer, VERTEX, 'answer')) };
  }
  const url = vertexUrl(conn, `${path}:streamGenerateContent`, { alt: 'sse' });
  const { content, secrets } = await googleDownload(conn, VERTEX, { method: 'POST', url, json, signal: request.signal });
  return { stream: true, id: completionId(), model: request.model, created: Math.floor(Date.now() / 1000), chunks: chunks(content.stream, secrets) };
}

const hasError = (value: unknown) => typeof value === 'object' && value !== null && 'error' in value;

/** One streamed response; an error Vertex reports mid-stream ends the answer as the provider's failure (scrubbed of `secrets`). */
function streamedResponse(data: string, secrets: readonly string[]): GenerateContentResponse {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    throw new GatewayError('provider', `${VERTEX} streamed an event that is not JSON`, { status: 502 });
  }
  // The error schema only for an event with an `error` key: one schema per event, not two.
  const failure = hasError(value) ? parseAnswer(streamErrorSchema, value, VERTEX, 'event').error : undefined;
  if (failure) {
    const message = `${VERTEX}: ${failure.message ? redactText(failure.message, secrets) : 'the stream ended with an error'}`;
    throw new GatewayError('provider', message, { status: 502, code: failure.status === undefined ? null : providerCode(failure.status) });
  }
  return parseAnswer(generateContentSchema, value, VERTEX, 'streamed answer');
}

/** Per candidate of a stream: how many function calls it has made, and why it ended. */
interface CandidateState {
  calls: number;
  finish: FinishReason | null;
}

/**
 * Each response's pieces per candidate (text, log probabilities, function calls as tool-call deltas), then each candidate's finish reason and the usage.
 */
async function* chunks(stream: Readable, secrets: readonly string[]): AsyncGenerator<ChatChunk> {
  const candidates = new Map<number, CandidateState>();
  const streamId = randomBytes(12).toString('hex');
  let usage: ChatUsage | null = null;
  try {
    for await (const data of sseData(stream)) {
      const response = streamedResponse(data, secrets);
      for (const candidate of response.candidates ?? [{}]) {
        const index = candidate.index ?? 0;
        const state = candidates.get(index) ?? { calls: 0, finish: null };
        candidates.set(index, state);
        const content = candidateText(candidate);
        const calls = candidateCalls(candidate, response.responseId ?? streamId, state.calls);
        const logprobs = candidateLogprobs(candidate);
        if (content || logprobs) yield { type: 'delta', index, ...(content ? { content } : {}), ...(logprobs ? { logprobs } : {}) };
        // Gemini sends each call whole; OpenAI's shape names the call first, then gives its arguments.
        for (const [k, call] of calls.entries()) {
          yield { type: 'delta', index, toolCalls: [{ index: state.calls + k, id: call.id, name: call.name, arguments: '' }] };
          yield { type: 'delta', index, toolCalls: [{ index: state.calls + k, arguments: call.arguments }] };
        }
        state.calls += calls.length;
        state.finish = finishReason(response, candidate) ?? state.finish;
      }
      usage = toUsage(response) ?? usage;
    }
  } finally {
    // Also when the consumer stops early: the provider connection closes with it.
    stream.destroy();
  }
  for (const [index, { calls, finish }] of [...candidates].sort(([a], [b]) => a - b)) {
    // Gemini ends a turn of function calls with STOP; OpenAI says tool_calls.
    yield { type: 'finish', index, finishReason: calls && (finish ?? 'stop') === 'stop' ? 'tool_calls' : (finish ?? 'stop') };
  }
  if (usage) yield { type: 'usage', usage };
}
