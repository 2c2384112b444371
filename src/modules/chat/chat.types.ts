import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, Float, ID, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';

/** OpenAI's message roles the gateway passes on; GraphQL names are upper-cased. */
export const ChatRoleEnum = { SYSTEM: 'system', DEVELOPER: 'developer', USER: 'user', ASSISTANT: 'assistant' } as const;
registerEnumType(ChatRoleEnum, { name: 'ChatRole' });

@InputType('ChatMessageInput')
export class ChatMessageInputType {
  @Field(() => ChatRoleEnum) role!: (typeof ChatRoleEnum)[keyof typeof ChatRoleEnum];
  @Field({ description: 'The text; `{{>slug}}` is replaced by the default version of that prompt partial.' }) content!: string;
  @Field(() => String, { nullable: true }) name?: string | null;
}

@InputType('ChatCompletionInput')
export class ChatCompletionInputType {
  @Field({
    description:
      'A fine-tuned model of the workspace (its fineTunedModel or job id); "@slug/<provider model id>" for a model of a stored integration; with `integration`, the provider\'s own model id.',
  })
  model!: string;
  @Field(() => [ChatMessageInputType]) messages!: ChatMessageInputType[];
  @Field(() => Int, { nullable: true }) maxTokens?: number | null;
  @Field(() => Float, { nullable: true, description: '0..2.' }) temperature?: number | null;
  @Field(() => Float, { nullable: true, description: '0..1.' }) topP?: number | null;
  @Field(() => [String], { nullable: true, description: 'Up to 4 stop sequences.' }) stop?: string[] | null;
  @Field(() => Int, { nullable: true }) seed?: number | null;
  @Field(() => String, {
    nullable: true,
    description: 'A stored integration as "@slug": call its provider directly (client mode) instead of a fine-tuned model of the workspace.',
  })
  integration?: string | null;
  @Field(() => GraphQLJSONObject, {
    nullable: true,
    description: 'Non-secret provider settings by header name, e.g. {"x-gateway-azure-deployment-id": "…"}; credentials come from the integration only.',
  })
  gatewayOptions?: Record<string, unknown> | null;
  @Field({ nullable: true, description: 'Workspace UUID or slug (organisation keys).' }) workspaceId?: string;
}

@ObjectType('ChatCompletionMessage')
export class ChatCompletionMessageType {
  @Field({ description: 'Always `assistant`.' }) role!: string;
  @Field() content!: string;
}

@ObjectType('ChatUsage')
export class ChatUsageType {
  @Field(() => Int) promptTokens!: number;
  @Field(() => Int) completionTokens!: number;
  @Field(() => Int) totalTokens!: number;
}

@ObjectType('ChatCompletion')
export class ChatCompletionType {
  @Field(() => ID) id!: string;
  @Field() model!: string;
  @Field() created!: Date;
  @Field(() => ChatCompletionMessageType) message!: ChatCompletionMessageType;
  @Field(() => String, { nullable: true, description: '`stop`, `length`, `content_filter` or `tool_calls`.' }) finishReason!: string | null;
  @Field(() => ChatUsageType, { nullable: true }) usage!: ChatUsageType | null;
}
