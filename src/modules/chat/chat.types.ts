import { Field, ID, Int, ObjectType } from 'type-graphql';

@ObjectType('ChatFunctionCall')
export class ChatFunctionCallType {
  @Field() name!: string;
  @Field({ description: 'The arguments as a JSON text (not always valid JSON: check before use).' }) arguments!: string;
}

@ObjectType('ChatToolCall')
export class ChatToolCallType {
  @Field() id!: string;
  @Field({ description: 'Always `function`.' }) type!: string;
  @Field(() => ChatFunctionCallType) function!: ChatFunctionCallType;
}

@ObjectType('ChatCompletionMessage')
export class ChatCompletionMessageType {
  @Field({ description: 'Always `assistant`.' }) role!: string;
  @Field(() => String, { nullable: true, description: 'Null when the model only called tools or refused.' }) content!: string | null;
  @Field(() => String, { nullable: true }) refusal!: string | null;
  @Field(() => [ChatToolCallType], { nullable: true, description: 'The tools the model calls; answer each with a TOOL message.' })
  toolCalls!: ChatToolCallType[] | null;
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
