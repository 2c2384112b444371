import { Field, ID, Int, ObjectType } from 'type-graphql';
import { itemCost } from '../../graphql/cost';

@ObjectType('Label', { description: 'A label of a workspace (production, staging, … or your own).' })
export class LabelType {
  @Field(() => ID) id!: string;
  @Field() name!: string;
  @Field() description!: string;
  @Field() colorCode!: string;
  @Field(() => ID) organisationId!: string;
  @Field(() => ID) workspaceId!: string;
  @Field({ description: 'True for the default labels every workspace has; they cannot be deleted.' }) isUniversal!: boolean;
  @Field() status!: string;
  @Field() createdAt!: Date;
  @Field() lastUpdatedAt!: Date;
}

@ObjectType('LabelPage')
export class LabelPageType {
  @Field(() => Int) total!: number;
  @Field(() => [LabelType], { complexity: itemCost }) items!: LabelType[];
}
