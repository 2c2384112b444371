import { Arg, Ctx, Mutation, Resolver } from 'type-graphql';
import type { Scope } from '../../auth/scope';
import type { AppContext } from '../../context';
import { GatewayError, invalidField } from '../../errors';
import { InputScope } from '../../graphql/scope';
import { PROVIDER_HEADER, type RequestHeaders } from '../../http/provider-headers';
import type { ChatCompletionInput } from './chat.schemas';
import { ChatCompletionInputType, ChatCompletionType } from './chat.types';

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

/** OpenAI's request (its spelling, which the service takes on every face). */
const toServiceInput = (input: ChatCompletionInputType): ChatCompletionInput => ({
  model: input.model,
  messages: input.messages.map((m) => ({ role: m.role, content: m.content, ...(m.name == null ? {} : { name: m.name }) })),
  max_tokens: input.maxTokens,
  temperature: input.temperature,
  top_p: input.topP,
  stop: input.stop,
  seed: input.seed,
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
      message: { role: 'assistant', content: choice?.content ?? '' },
      finishReason: choice?.finishReason ?? null,
      usage: completion.usage,
    };
  }
}

export const chatGraphQL = { resolvers: [ChatResolver] };
