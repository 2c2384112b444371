import { Arg, Ctx, Mutation, Resolver } from 'type-graphql';
import type { Scope } from '../../auth/scope';
import type { AppContext } from '../../context';
import { GatewayError, invalidField, type FieldPath } from '../../errors';
import { InputScope } from '../../graphql/scope';
import { PROVIDER_HEADER, type RequestHeaders } from '../../http/provider-headers';
import type { ChatChoice } from '../../providers/types';
import { untrustedInput } from '../../validation/parse';
import {
  ChatCompletionInputType,
  type ChatContentPartInputType,
  type ChatMessageInputType,
  type ChatResponseFormatInputType,
  type ChatToolChoiceInputType,
  type ChatToolInputType,
} from './chat.inputs';
import { finishReasonOf, toolCallJson } from './chat.mapper';
import { ChatCompletionType } from './chat.types';

/** The settings the service reads from REST headers: `integration` names the provider, `gatewayOptions` add settings. */
function settingsOf(input: ChatCompletionInputType): RequestHeaders {
  if (input.integration != null && !input.integration.startsWith('@')) {
    // Credentials never travel in GraphQL input: a provider is reached only through a stored integration.
    throw invalidField('integration', 'must name a stored integration as "@slug"');
  }
  const options = Object.entries(input.gatewayOptions ?? {}).map(([key, value]) => {
    if (typeof value !== 'string') throw invalidField(['gatewayOptions', key], 'must be a string');
    return [key.toLowerCase(), value] as const;
  });
  return { ...Object.fromEntries(options), ...(input.integration == null ? {} : { [PROVIDER_HEADER]: input.integration }) };
}

/** The object without its null or undefined fields (GraphQL's "not given"), which OpenAI's request leaves out. */
const defined = (fields: Record<string, unknown>) => Object.fromEntries(Object.entries(fields).filter(([, value]) => value != null));

const partJson = (part: ChatContentPartInputType, path: FieldPath) => {
  if ((part.text == null) === (part.imageUrl == null)) throw invalidField(path, 'must set exactly one of text and imageUrl');
  return part.imageUrl == null ? { type: 'text', text: part.text } : { type: 'image_url', image_url: defined({ ...part.imageUrl }) };
};

function messageJson(m: ChatMessageInputType, index: number) {
  if (m.content != null && m.parts != null) throw invalidField(['messages', index, 'parts'], 'give content or parts, not both');
  const content = m.parts?.map((part, i) => partJson(part, ['messages', index, 'parts', i])) ?? m.content;
  const toolCalls = m.toolCalls?.map((call) => ({ id: call.id, type: 'function', function: { name: call.function.name, arguments: call.function.arguments } }));
  return defined({ role: m.role, content, name: m.name, tool_calls: toolCalls, tool_call_id: m.toolCallId, refusal: m.refusal });
}

function toolChoiceJson(choice: ChatToolChoiceInputType) {
  if ((choice.mode == null) === (choice.functionName == null)) throw invalidField('toolChoice', 'must set exactly one of mode and functionName');
  return choice.mode ?? { type: 'function', function: { name: choice.functionName } };
}

const toolJson = ({ function: fn }: ChatToolInputType) => ({
  type: 'function',
  function: defined({ name: fn.name, description: fn.description, parameters: fn.parameters, strict: fn.strict }),
});

const responseFormatJson = ({ type, jsonSchema }: ChatResponseFormatInputType) =>
  defined({
    type,
    json_schema: jsonSchema && defined({ name: jsonSchema.name, description: jsonSchema.description, schema: jsonSchema.schema, strict: jsonSchema.strict }),
  });

/**
 * OpenAI's request in its own spelling, which the service takes on every face (and validates). JSON
 * Schemas (`parameters`, `schema`) are passed as given: their keys are the caller's, not fields.
 */
const toServiceInput = (input: ChatCompletionInputType) =>
  untrustedInput(
    defined({
      model: input.model,
      messages: input.messages.map(messageJson),
      max_tokens: input.maxTokens,
      max_completion_tokens: input.maxCompletionTokens,
      temperature: input.temperature,
      top_p: input.topP,
      stop: input.stop,
      seed: input.seed,
      presence_penalty: input.presencePenalty,
      frequency_penalty: input.frequencyPenalty,
      tools: input.tools?.map(toolJson),
      tool_choice: input.toolChoice && toolChoiceJson(input.toolChoice),
      parallel_tool_calls: input.parallelToolCalls,
      response_format: input.responseFormat && responseFormatJson(input.responseFormat),
      user: input.user,
    }),
  );

/** The first choice's message as GraphQL answers it. */
const messageOf = (choice: ChatChoice | undefined) => ({
  role: 'assistant',
  content: choice?.content ?? null,
  refusal: choice?.refusal ?? null,
  toolCalls: choice?.toolCalls.length ? choice.toolCalls.map(toolCallJson) : null,
});

@Resolver(() => ChatCompletionType)
export class ChatResolver {
  @Mutation(() => ChatCompletionType, { description: 'A chat completion (not streamed) with a fine-tuned model of the workspace, or through an integration.' })
  async chatCompletion(@Ctx() ctx: AppContext, @Arg('input', () => ChatCompletionInputType) input: ChatCompletionInputType, @InputScope() scope: Scope) {
    // GraphQL answers once: there is no stream for a client to leave, so nothing aborts the call but its time-out.
    const meter = ctx.services.usage.recorder.chatMeter(ctx.caller);
    const signal = new AbortController().signal;
    const { answer } = await ctx.services.chat.complete(() => Promise.resolve(scope), settingsOf(input), toServiceInput(input), signal, meter);
    if (answer.stream) throw new GatewayError('internal', 'A chat answer asked for whole came back streamed');
    const { completion } = answer;
    const choice = completion.choices[0];
    return {
      id: completion.id,
      model: completion.model,
      created: new Date(completion.created * 1000),
      message: messageOf(choice),
      finishReason: choice ? finishReasonOf(choice) : null,
      usage: completion.usage,
    };
  }
}

export const chatGraphQL = { resolvers: [ChatResolver] };
