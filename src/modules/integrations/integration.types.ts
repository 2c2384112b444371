import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, ObjectType } from 'type-graphql';
import { providerNames } from '../../providers/registry';

@ObjectType('Integration', { description: 'A stored provider credential, referenced as "@slug". Its credentials are never returned.' })
export class IntegrationType {
  @Field(() => ID) id!: string;
  @Field() slug!: string;
  @Field({ description: `${providerNames()}.` }) provider!: string;
  @Field() name!: string;
  @Field(() => GraphQLJSONObject, { description: 'Non-secret provider settings (snake_case keys).' }) options!: Record<string, string>;
  @Field(() => ID) organisationId!: string;
  @Field(() => ID) workspaceId!: string;
  @Field() createdAt!: Date;
}
