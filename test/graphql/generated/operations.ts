/** Internal type. DO NOT USE DIRECTLY. */
type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
/** Internal type. DO NOT USE DIRECTLY. */
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';
export type ChatCompletionInput = {
  /** -2..2. */
  frequencyPenalty?: number | null | undefined;
  /** Non-secret provider settings by header name, e.g. {"x-gateway-azure-deployment-id": "…"}; credentials come from the integration only. */
  gatewayOptions?: Record<string, unknown> | null | undefined;
  /** A stored integration as "@slug": call its provider directly (client mode) instead of a fine-tuned model of the workspace. */
  integration?: string | null | undefined;
  maxCompletionTokens?: number | null | undefined;
  maxTokens?: number | null | undefined;
  messages: Array<ChatMessageInput>;
  /** A fine-tuned model of the workspace (its fineTunedModel or job id); "@slug/<provider model id>" for a model of a stored integration; with `integration`, the provider's own model id. */
  model: string;
  parallelToolCalls?: boolean | null | undefined;
  /** -2..2. */
  presencePenalty?: number | null | undefined;
  responseFormat?: ChatResponseFormatInput | null | undefined;
  seed?: number | null | undefined;
  /** Up to 4 stop sequences. */
  stop?: Array<string> | null | undefined;
  /** 0..2. */
  temperature?: number | null | undefined;
  toolChoice?: ChatToolChoiceInput | null | undefined;
  tools?: Array<ChatToolInput> | null | undefined;
  /** 0..1. */
  topP?: number | null | undefined;
  user?: string | null | undefined;
  /** Workspace UUID or slug (organisation keys). */
  workspaceId?: string | null | undefined;
};

/** One part of a message: exactly one of `text` and `imageUrl`. */
export type ChatContentPartInput = {
  /** User messages only. */
  imageUrl?: ChatImageUrlInput | null | undefined;
  text?: string | null | undefined;
};

export type ChatFunctionCallInput = {
  /** The arguments as a JSON text, as the model gave them. */
  arguments: string;
  name: string;
};

export type ChatFunctionInput = {
  description?: string | null | undefined;
  /** 1 to 64 letters, digits, underscores or dashes. */
  name: string;
  /** A JSON Schema of the arguments, passed on with its keys as given. */
  parameters?: Record<string, unknown> | null | undefined;
  strict?: boolean | null | undefined;
};

export type ChatImageDetail =
  | 'AUTO'
  | 'HIGH'
  | 'LOW';

export type ChatImageUrlInput = {
  detail?: ChatImageDetail | null | undefined;
  /** An https URL or a `data:` URL (base64); which a provider takes is in the README. */
  url: string;
};

export type ChatJsonSchemaInput = {
  description?: string | null | undefined;
  name: string;
  /** The JSON Schema of the answer, passed on with its keys as given. */
  schema?: Record<string, unknown> | null | undefined;
  strict?: boolean | null | undefined;
};

export type ChatMessageInput = {
  /** The text; `{{>slug}}` is replaced by the default version of that prompt partial. Leave out for `parts`, or for an assistant message with `toolCalls`. */
  content?: string | null | undefined;
  name?: string | null | undefined;
  /** The content as parts (text, images) instead of `content`. */
  parts?: Array<ChatContentPartInput> | null | undefined;
  /** Assistant messages: a refusal the model gave. */
  refusal?: string | null | undefined;
  role: ChatRole;
  /** Tool messages: the call this message answers. */
  toolCallId?: string | null | undefined;
  /** Assistant messages: the tools the model called. */
  toolCalls?: Array<ChatToolCallInput> | null | undefined;
};

export type ChatResponseFormatInput = {
  /** With type JSON_SCHEMA. */
  jsonSchema?: ChatJsonSchemaInput | null | undefined;
  type: ChatResponseFormatType;
};

export type ChatResponseFormatType =
  | 'JSON_OBJECT'
  | 'JSON_SCHEMA'
  | 'TEXT';

export type ChatRole =
  | 'ASSISTANT'
  | 'DEVELOPER'
  | 'SYSTEM'
  | 'TOOL'
  | 'USER';

/** A tool call of an earlier assistant answer, sent back with the conversation. */
export type ChatToolCallInput = {
  function: ChatFunctionCallInput;
  id: string;
};

/** Exactly one of `mode` and `functionName`. */
export type ChatToolChoiceInput = {
  /** The tool the model must call. */
  functionName?: string | null | undefined;
  mode?: ChatToolChoiceMode | null | undefined;
};

export type ChatToolChoiceMode =
  | 'AUTO'
  | 'NONE'
  | 'REQUIRED';

/** A function the model may call. */
export type ChatToolInput = {
  function: ChatFunctionInput;
};

export type CreateLabelInput = {
  colorCode?: string | null | undefined;
  description?: string | null | undefined;
  name: string;
  /** Workspace UUID or slug (organisation keys). */
  workspaceId?: string | null | undefined;
};

export type UpdateLabelInput = {
  colorCode?: string | null | undefined;
  description?: string | null | undefined;
  name?: string | null | undefined;
};

export type ChatCompletionMutationVariables = Exact<{
  input: ChatCompletionInput;
}>;


export type ChatCompletionMutation = { chatCompletion: { id: string, model: string, created: string, finishReason: string | null, message: { role: string, content: string | null, refusal: string | null, toolCalls: Array<{ id: string, type: string, function: { name: string, arguments: string } }> | null }, usage: { promptTokens: number, completionTokens: number, totalTokens: number } | null } };

export type ModelsQueryVariables = Exact<{
  workspaceId?: string | null | undefined;
}>;


export type ModelsQuery = { models: Array<{ id: string, created: string, ownedBy: string, provider: string, fineTuningJobId: string | null, integration: string | null }> };

export type JobResultModelQueryVariables = Exact<{
  id: string | number;
}>;


export type JobResultModelQuery = { fineTuningJob: { id: string, fineTunedModel: string | null, resultModel: { id: string, provider: string, fineTuningJobId: string | null } | null } };

export type LabelFieldsFragment = { id: string, name: string, description: string, colorCode: string, organisationId: string, workspaceId: string, isUniversal: boolean, status: string, createdAt: string, lastUpdatedAt: string };

export type LabelQueryVariables = Exact<{
  id: string | number;
  workspaceId?: string | null | undefined;
}>;


export type LabelQuery = { label: { id: string, name: string, description: string, colorCode: string, organisationId: string, workspaceId: string, isUniversal: boolean, status: string, createdAt: string, lastUpdatedAt: string } };

export type LabelsQueryVariables = Exact<{
  search?: string | null | undefined;
  page?: number | null | undefined;
  pageSize?: number | null | undefined;
  workspaceId?: string | null | undefined;
}>;


export type LabelsQuery = { labels: { total: number, items: Array<{ id: string, name: string, description: string, colorCode: string, organisationId: string, workspaceId: string, isUniversal: boolean, status: string, createdAt: string, lastUpdatedAt: string }> } };

export type CreateLabelMutationVariables = Exact<{
  input: CreateLabelInput;
}>;


export type CreateLabelMutation = { createLabel: { id: string, name: string, description: string, colorCode: string, organisationId: string, workspaceId: string, isUniversal: boolean, status: string, createdAt: string, lastUpdatedAt: string } };

export type UpdateLabelMutationVariables = Exact<{
  id: string | number;
  input: UpdateLabelInput;
  workspaceId?: string | null | undefined;
}>;


export type UpdateLabelMutation = { updateLabel: { id: string, name: string, description: string, colorCode: string, organisationId: string, workspaceId: string, isUniversal: boolean, status: string, createdAt: string, lastUpdatedAt: string } };

export type DeleteLabelMutationVariables = Exact<{
  id: string | number;
  workspaceId?: string | null | undefined;
}>;


export type DeleteLabelMutation = { deleteLabel: boolean };

export const LabelFieldsFragmentDoc = {"kind":"Document","definitions":[{"kind":"FragmentDefinition","name":{"kind":"Name","value":"LabelFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Label"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"description"}},{"kind":"Field","name":{"kind":"Name","value":"colorCode"}},{"kind":"Field","name":{"kind":"Name","value":"organisationId"}},{"kind":"Field","name":{"kind":"Name","value":"workspaceId"}},{"kind":"Field","name":{"kind":"Name","value":"isUniversal"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"lastUpdatedAt"}}]}}]} as unknown as DocumentNode<LabelFieldsFragment, unknown>;
export const ChatCompletionDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"ChatCompletion"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ChatCompletionInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"chatCompletion"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"model"}},{"kind":"Field","name":{"kind":"Name","value":"created"}},{"kind":"Field","name":{"kind":"Name","value":"message"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"role"}},{"kind":"Field","name":{"kind":"Name","value":"content"}},{"kind":"Field","name":{"kind":"Name","value":"refusal"}},{"kind":"Field","name":{"kind":"Name","value":"toolCalls"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"type"}},{"kind":"Field","name":{"kind":"Name","value":"function"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"arguments"}}]}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"finishReason"}},{"kind":"Field","name":{"kind":"Name","value":"usage"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"promptTokens"}},{"kind":"Field","name":{"kind":"Name","value":"completionTokens"}},{"kind":"Field","name":{"kind":"Name","value":"totalTokens"}}]}}]}}]}}]} as unknown as DocumentNode<ChatCompletionMutation, ChatCompletionMutationVariables>;
export const ModelsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"Models"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"workspaceId"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"models"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"workspaceId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"workspaceId"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"created"}},{"kind":"Field","name":{"kind":"Name","value":"ownedBy"}},{"kind":"Field","name":{"kind":"Name","value":"provider"}},{"kind":"Field","name":{"kind":"Name","value":"fineTuningJobId"}},{"kind":"Field","name":{"kind":"Name","value":"integration"}}]}}]}}]} as unknown as DocumentNode<ModelsQuery, ModelsQueryVariables>;
export const JobResultModelDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"JobResultModel"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"fineTuningJob"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"fineTunedModel"}},{"kind":"Field","name":{"kind":"Name","value":"resultModel"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"provider"}},{"kind":"Field","name":{"kind":"Name","value":"fineTuningJobId"}}]}}]}}]}}]} as unknown as DocumentNode<JobResultModelQuery, JobResultModelQueryVariables>;
export const LabelDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"Label"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"workspaceId"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"label"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}},{"kind":"Argument","name":{"kind":"Name","value":"workspaceId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"workspaceId"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"LabelFields"}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"LabelFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Label"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"description"}},{"kind":"Field","name":{"kind":"Name","value":"colorCode"}},{"kind":"Field","name":{"kind":"Name","value":"organisationId"}},{"kind":"Field","name":{"kind":"Name","value":"workspaceId"}},{"kind":"Field","name":{"kind":"Name","value":"isUniversal"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"lastUpdatedAt"}}]}}]} as unknown as DocumentNode<LabelQuery, LabelQueryVariables>;
export const LabelsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"Labels"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"search"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"page"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"pageSize"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"workspaceId"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"labels"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"search"},"value":{"kind":"Variable","name":{"kind":"Name","value":"search"}}},{"kind":"Argument","name":{"kind":"Name","value":"page"},"value":{"kind":"Variable","name":{"kind":"Name","value":"page"}}},{"kind":"Argument","name":{"kind":"Name","value":"pageSize"},"value":{"kind":"Variable","name":{"kind":"Name","value":"pageSize"}}},{"kind":"Argument","name":{"kind":"Name","value":"workspaceId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"workspaceId"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"total"}},{"kind":"Field","name":{"kind":"Name","value":"items"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"LabelFields"}}]}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"LabelFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Label"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"description"}},{"kind":"Field","name":{"kind":"Name","value":"colorCode"}},{"kind":"Field","name":{"kind":"Name","value":"organisationId"}},{"kind":"Field","name":{"kind":"Name","value":"workspaceId"}},{"kind":"Field","name":{"kind":"Name","value":"isUniversal"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"lastUpdatedAt"}}]}}]} as unknown as DocumentNode<LabelsQuery, LabelsQueryVariables>;
export const CreateLabelDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"CreateLabel"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"CreateLabelInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"createLabel"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"LabelFields"}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"LabelFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Label"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"description"}},{"kind":"Field","name":{"kind":"Name","value":"colorCode"}},{"kind":"Field","name":{"kind":"Name","value":"organisationId"}},{"kind":"Field","name":{"kind":"Name","value":"workspaceId"}},{"kind":"Field","name":{"kind":"Name","value":"isUniversal"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"lastUpdatedAt"}}]}}]} as unknown as DocumentNode<CreateLabelMutation, CreateLabelMutationVariables>;
export const UpdateLabelDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"UpdateLabel"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"UpdateLabelInput"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"workspaceId"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"updateLabel"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}},{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}},{"kind":"Argument","name":{"kind":"Name","value":"workspaceId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"workspaceId"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"LabelFields"}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"LabelFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Label"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"description"}},{"kind":"Field","name":{"kind":"Name","value":"colorCode"}},{"kind":"Field","name":{"kind":"Name","value":"organisationId"}},{"kind":"Field","name":{"kind":"Name","value":"workspaceId"}},{"kind":"Field","name":{"kind":"Name","value":"isUniversal"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"lastUpdatedAt"}}]}}]} as unknown as DocumentNode<UpdateLabelMutation, UpdateLabelMutationVariables>;
export const DeleteLabelDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"DeleteLabel"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"workspaceId"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"deleteLabel"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}},{"kind":"Argument","name":{"kind":"Name","value":"workspaceId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"workspaceId"}}}]}]}}]} as unknown as DocumentNode<DeleteLabelMutation, DeleteLabelMutationVariables>;