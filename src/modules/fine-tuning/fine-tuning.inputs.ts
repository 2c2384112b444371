import { GraphQLJSON } from 'graphql-scalars';
import { Field, Float, ID, InputType, Int } from 'type-graphql';
import type { MethodType } from './fine-tuning.model';
import { FineTuningMethodTypeEnum } from './fine-tuning.types';

@InputType('FineTuningHyperparametersInput', { description: 'Leave a value out (or null) for "auto": the provider chooses.' })
export class FineTuningHyperparametersInputType {
  @Field(() => Int, { nullable: true, description: '1..50.' }) nEpochs?: number | null;
  @Field(() => Int, { nullable: true, description: '1..256.' }) batchSize?: number | null;
  @Field(() => Float, { nullable: true, description: 'Above 0, at most 10.' }) learningRateMultiplier?: number | null;
  @Field(() => Float, { nullable: true, description: 'DPO only; above 0, at most 2.' }) beta?: number | null;
}

@InputType('FineTuningMethodInput')
export class FineTuningMethodInputType {
  @Field(() => FineTuningMethodTypeEnum) type!: MethodType;
  @Field(() => FineTuningHyperparametersInputType, { nullable: true }) hyperparameters?: FineTuningHyperparametersInputType | null;
}

@InputType('CreateFineTuningJobInput')
export class CreateFineTuningJobInputType {
  @Field({ description: 'The base model to fine-tune.' }) model!: string;
  @Field(() => ID, { description: 'A gateway file id (purpose FINE_TUNE) of the workspace.' }) trainingFile!: string;
  @Field(() => ID, { nullable: true }) validationFile?: string;
  @Field({ nullable: true, description: '1..64 characters, added to the fine-tuned model name.' }) suffix?: string;
  @Field(() => Int, { nullable: true }) seed?: number;
  @Field(() => FineTuningMethodInputType, { nullable: true }) method?: FineTuningMethodInputType;
  @Field(() => GraphQLJSON, { nullable: true, description: 'Up to 16 string key-value pairs.' }) metadata?: unknown;
  @Field({
    nullable: true,
    description: 'The stored integration to run the job with, as "@slug" (REST: gateway_options["x-gateway-provider"]).',
  })
  integration?: string;
  @Field(() => GraphQLJSON, {
    nullable: true,
    description: 'Further provider settings with their REST keys, e.g. {"x-gateway-openai-project": "…"}; may also hold "x-gateway-provider".',
  })
  gatewayOptions?: unknown;
  @Field(() => GraphQLJSON, {
    nullable: true,
    description:
      'Job options of the integration\'s provider (REST: provider_options), camelCase keys: "model" (the provider\'s own model id, when it differs from `model`) and the options the provider declares, e.g. {"learningRate": 0.0001} (listed in /v1/openapi.json, ProviderOptions); any other is refused.',
  })
  providerOptions?: unknown;
  @Field({ nullable: true, description: 'Workspace UUID or slug (organisation keys).' }) workspaceId?: string;
}
