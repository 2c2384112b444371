/**
 * `chatCompletion`'s input: OpenAI's Chat Completions request in GraphQL's camelCase (the resolver
 * builds OpenAI's snake_case body from it). JSON Schemas travel as JSON scalars and keep the caller's
 * keys. GraphQL has no input unions, so a content part or tool choice sets exactly one of its fields.
 */
import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, Float, InputType, Int, registerEnumType } from 'type-graphql';

/** OpenAI's message roles the gateway passes on; GraphQL names are upper-cased. */
export const ChatRoleEnum = { SYSTEM: 'system', DEVELOPER: 'developer', USER: 'user', ASSISTANT: 'assistant', TOOL: 'tool' } as const;
registerEnumType(ChatRoleEnum, { name: 'ChatRole' });

export const ImageDetailEnum = { AUTO: 'auto', LOW: 'low', HIGH: 'high' } as const;
registerEnumType(ImageDetailEnum, { name: 'ChatImageDetail' });

export const ToolChoiceModeEnum = { NONE: 'none', AUTO: 'auto', REQUIRED: 'required' } as const;
registerEnumType(ToolChoiceModeEnum, { name: 'ChatToolChoiceMode' });

export const ResponseFormatTypeEnum = { TEXT: 'text', JSON_OBJECT: 'json_object', JSON_SCHEMA: 'json_schema' } as const;
registerEnumType(ResponseFormatTypeEnum, { name: 'ChatResponseFormatType' });

type ValueOf<T> = T[keyof T];

@InputType('ChatImageUrlInput')
export class ChatImageUrlInputType {
  @Field({ description: 'An https URL or a `data:` URL (base64); which a provider takes is in the README.' }) url!: string;
  @Field(() => ImageDetailEnum, { nullable: true }) detail?: ValueOf<typeof ImageDetailEnum> | null;
}

@InputType('ChatContentPartInput', { description: 'One part of a message: exactly one of `text` and `imageUrl`.' })
export class ChatContentPartInputType {
  @Field(() => String, { nullable: true }) text?: string | null;
  @Field(() => ChatImageUrlInputType, { nullable: true, description: 'User messages only.' }) imageUrl?: ChatImageUrlInputType | null;
}

@InputType('ChatFunctionCallInput')
export class ChatFunctionCallInputType {
  @Field() name!: string;
  @Field({ description: 'The arguments as a JSON text, as the model gave them.' }) arguments!: string;
}

@InputType('ChatToolCallInput', { description: 'A tool call of an earlier assistant answer, sent back with the conversation.' })
export class ChatToolCallInputType {
  @Field() id!: string;
  @Field(() => ChatFunctionCallInputType) function!: ChatFunctionCallInputType;
}

@InputType('ChatMessageInput')
export class ChatMessageInputType {
  @Field(() => ChatRoleEnum) role!: ValueOf<typeof ChatRoleEnum>;
  @Field(() => String, {
    nullable: true,
    description:
      'The text; `{{>slug}}` is replaced by the default version of that prompt partial. Leave out for `parts`, or for an assistant message with `toolCalls`.',
  })
  content?: string | null;
  @Field(() => [ChatContentPartInputType], { nullable: true, description: 'The content as parts (text, images) instead of `content`.' })
  parts?: ChatContentPartInputType[] | null;
  @Field(() => String, { nullable: true }) name?: string | null;
  @Field(() => [ChatToolCallInputType], { nullable: true, description: 'Assistant messages: the tools the model called.' })
  toolCalls?: ChatToolCallInputType[] | null;
  @Field(() => String, { nullable: true, description: 'Tool messages: the call this message answers.' }) toolCallId?: string | null;
  @Field(() => String, { nullable: true, description: 'Assistant messages: a refusal the model gave.' }) refusal?: string | null;
}

@InputType('ChatFunctionInput')
export class ChatFunctionInputType {
  @Field({ description: '1 to 64 letters, digits, underscores or dashes.' }) name!: string;
  @Field(() => String, { nullable: true }) description?: string | null;
  @Field(() => GraphQLJSONObject, { nullable: true, description: 'A JSON Schema of the arguments, passed on with its keys as given.' })
  parameters?: Record<string, unknown> | null;
  @Field(() => Boolean, { nullable: true }) strict?: boolean | null;
}

@InputType('ChatToolInput', { description: 'A function the model may call.' })
export class ChatToolInputType {
  @Field(() => ChatFunctionInputType) function!: ChatFunctionInputType;
}

@InputType('ChatToolChoiceInput', { description: 'Exactly one of `mode` and `functionName`.' })
export class ChatToolChoiceInputType {
  @Field(() => ToolChoiceModeEnum, { nullable: true }) mode?: ValueOf<typeof ToolChoiceModeEnum> | null;
  @Field(() => String, { nullable: true, description: 'The tool the model must call.' }) functionName?: string | null;
}

@InputType('ChatJsonSchemaInput')
export class ChatJsonSchemaInputType {
  @Field() name!: string;
  @Field(() => String, { nullable: true }) description?: string | null;
  @Field(() => GraphQLJSONObject, { nullable: true, description: 'The JSON Schema of the answer, passed on with its keys as given.' })
  schema?: Record<string, unknown> | null;
  @Field(() => Boolean, { nullable: true }) strict?: boolean | null;
}

@InputType('ChatResponseFormatInput')
export class ChatResponseFormatInputType {
  @Field(() => ResponseFormatTypeEnum) type!: ValueOf<typeof ResponseFormatTypeEnum>;
  @Field(() => ChatJsonSchemaInputType, { nullable: true, description: 'With type JSON_SCHEMA.' }) jsonSchema?: ChatJsonSchemaInputType | null;
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
  @Field(() => Int, { nullable: true }) maxCompletionTokens?: number | null;
  @Field(() => Float, { nullable: true, description: '0..2.' }) temperature?: number | null;
  @Field(() => Float, { nullable: true, description: '0..1.' }) topP?: number | null;
  @Field(() => [String], { nullable: true, description: 'Up to 4 stop sequences.' }) stop?: string[] | null;
  @Field(() => Int, { nullable: true }) seed?: number | null;
  @Field(() => Float, { nullable: true, description: '-2..2.' }) presencePenalty?: number | null;
  @Field(() => Float, { nullable: true, description: '-2..2.' }) frequencyPenalty?: number | null;
  @Field(() => [ChatToolInputType], { nullable: true }) tools?: ChatToolInputType[] | null;
  @Field(() => ChatToolChoiceInputType, { nullable: true }) toolChoice?: ChatToolChoiceInputType | null;
  @Field(() => Boolean, { nullable: true }) parallelToolCalls?: boolean | null;
  @Field(() => ChatResponseFormatInputType, { nullable: true }) responseFormat?: ChatResponseFormatInputType | null;
  @Field(() => String, { nullable: true }) user?: string | null;
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
