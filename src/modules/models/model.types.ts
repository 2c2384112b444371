import { Field, ID, ObjectType } from 'type-graphql';

@ObjectType('Model', { description: 'A fine-tuned model the gateway serves: the result of a succeeded hosted job of the workspace.' })
export class ModelType {
  @Field(() => ID, { description: "The job's fineTunedModel: what chatCompletion takes as `model`." }) id!: string;
  @Field({ description: 'When its job finished.' }) created!: Date;
  @Field({ description: 'The organisation that owns it.' }) ownedBy!: string;
  @Field({ description: 'The provider that trained it and serves it.' }) provider!: string;
  @Field(() => ID) fineTuningJobId!: string;
}
