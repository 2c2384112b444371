import { Field, ID, InputType } from 'type-graphql';

@InputType('CreatePromptPartialInput')
export class CreatePromptPartialInputType {
  @Field() name!: string;
  @Field({ description: 'The text of version 1 (at most 100 000 characters).' }) string!: string;
  @Field({ nullable: true }) versionDescription?: string;
  @Field(() => ID, { nullable: true, description: "Defaults to the workspace's default collection." }) collectionId?: string;
  @Field({ nullable: true, description: 'Workspace UUID or slug (organisation keys).' }) workspaceId?: string;
}

@InputType('UpdatePromptPartialInput')
export class UpdatePromptPartialInputType {
  @Field({ nullable: true }) name?: string;
  @Field({ nullable: true, description: 'A text different from the newest version saves a new version.' }) string?: string;
  @Field({ nullable: true, description: 'Describes the version this update saves.' }) description?: string;
  @Field({ nullable: true, description: '`active` or `archived`.' }) status?: string;
}
