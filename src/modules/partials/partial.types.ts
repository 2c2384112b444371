import { Field, ID, Int, ObjectType } from 'type-graphql';

@ObjectType('Collection', { description: 'A folder of prompt partials; every workspace has a default one.' })
export class CollectionType {
  @Field(() => ID) id!: string;
  @Field() name!: string;
  @Field() slug!: string;
  @Field({ description: "True for the workspace's default collection." }) isDefault!: boolean;
  @Field() createdAt!: Date;
  @Field() lastUpdatedAt!: Date;
}

@ObjectType('PromptPartialVersion', { description: 'One saved text of a prompt partial.' })
export class PromptPartialVersionType {
  @Field(() => ID) id!: string;
  @Field(() => ID) partialId!: string;
  @Field(() => Int, { description: '1, 2, 3… in the order the versions were saved.' }) version!: number;
  @Field({ description: 'The text of this version.' }) string!: string;
  @Field() description!: string;
  @Field({ description: '`active` or `archived`.' }) status!: string;
  @Field() createdAt!: Date;
}

@ObjectType('PromptPartial', { description: 'Reusable prompt text, versioned; one version is the default (published) one.' })
export class PromptPartialType {
  @Field(() => ID) id!: string;
  @Field({ description: 'Derived from the name at creation, unique per workspace, kept across renames.' }) slug!: string;
  @Field() name!: string;
  @Field(() => ID) collectionId!: string;
  @Field({ description: '`active` or `archived`.' }) status!: string;
  @Field() createdAt!: Date;
  @Field() lastUpdatedAt!: Date;

  // Not exposed: what the relation fields need to load through the request's DataLoaders.
  organisationId!: string;
  workspaceId!: string;
  defaultVersionId!: string | null;
}
