import { Field, InputType } from 'type-graphql';

@InputType('CreateLabelInput')
export class CreateLabelInputType {
  @Field() name!: string;
  @Field({ nullable: true }) description?: string;
  @Field({ nullable: true }) colorCode?: string;
  @Field({ nullable: true, description: 'Workspace UUID or slug (organisation keys).' }) workspaceId?: string;
}

@InputType('UpdateLabelInput')
export class UpdateLabelInputType {
  @Field({ nullable: true }) name?: string;
  @Field({ nullable: true }) description?: string;
  @Field({ nullable: true }) colorCode?: string;
}
