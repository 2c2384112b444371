import { Field, ID, ObjectType } from 'type-graphql';

@ObjectType('Model', {
  description:
    'A model the workspace can call: a fine-tuned model the gateway serves (the result of a succeeded hosted job), or a model an integration\'s provider lists, as "@slug/<provider model id>".',
})
export class ModelType {
  @Field(() => ID, { description: "The job's fineTunedModel: what chatCompletion takes as `model`." }) id!: string;
  @Field({ description: "When its job finished; for an integration's model, when the provider made it (the epoch when it does not say)." }) created!: Date;
  @Field({ description: "The organisation that owns it; for an integration's model, the owner its provider names." }) ownedBy!: string;
  @Field({ description: 'The provider that serves it.' }) provider!: string;
  @Field(() => ID, { nullable: true, description: "The job that made it; null for an integration's model." }) fineTuningJobId!: string | null;
  @Field(() => String, { nullable: true, description: 'The integration it is called through, as "@slug"; null for a fine-tuned model.' }) integration!:
    string | null;
}
