/**
 * OpenAI's Chat Completions request, as the gateway validates it (src/providers/chat-request.ts): in
 * OpenAI's snake_case spelling on every face, since it is relayed to OpenAI-compatible providers as
 * it came (the REST face does not convert it; GraphQL builds it). What a provider cannot carry is a
 * 400 naming the field and the provider (src/providers/chat-fields.ts), never silently dropped.
 */
export { chatRequestSchema as chatCompletionSchema, type ChatBodyInput as ChatCompletionInput } from '../../providers/chat-request';
