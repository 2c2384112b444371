import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, ObjectType } from 'type-graphql';

@ObjectType('Integration', { description: 'A stored provider credential, referenced as "@slug". Its credentials are never returned.' })
export class IntegrationType {
  @Field(() => ID) id!: string;
  @Field() slug!: string;
  @Field({ description: 'openai, azure-openai, bedrock, vertex-ai, fireworks-ai or together-ai.' }) provider!: string;
  @Field() name!: string;
  @Field(() => GraphQLJSONObject, { description: 'Non-secret provider settings (snake_case keys).' }) options!: Record<string, string>;
  @Field(() => ID) organisationId!: string;
  @Field(() => ID) workspaceId!: string;
  @Field() createdAt!: Date;
}
