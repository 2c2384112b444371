import { GraphQLJSON, GraphQLJSONObject, GraphQLSafeInt } from 'graphql-scalars';
import { Field, Float, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import { itemCost } from '../../graphql/cost';
import type { EventLevel, EventType, JobStatus, MethodType, RetryReason } from './fine-tuning.model';

/** The REST status values; GraphQL names are the same upper-cased (api.md §8's rule for enums). */
export const FineTuningJobStatusEnum = {
  VALIDATING_FILES: 'validating_files',
  QUEUED: 'queued',
  RUNNING: 'running',
  SUCCEEDED: 'succeeded',
  FAILED: 'failed',
  CANCELLED: 'cancelled',
} as const satisfies Record<string, JobStatus>;

export const FineTuningMethodTypeEnum = { SUPERVISED: 'supervised', DPO: 'dpo' } as const satisfies Record<string, MethodType>;

export const FineTuningRetryReasonEnum = {
  PROVIDER_UNREACHABLE: 'provider_unreachable',
  PROVIDER_UNAVAILABLE: 'provider_unavailable',
  PROVIDER_RATE_LIMITED: 'provider_rate_limited',
  GATEWAY_ERROR: 'gateway_error',
} as const satisfies Record<string, RetryReason>;

registerEnumType(FineTuningJobStatusEnum, { name: 'FineTuningJobStatus' });
registerEnumType(FineTuningRetryReasonEnum, {
  name: 'FineTuningRetryReason',
  description: 'Why a step of the job monitor failed: no answer from the provider, its 5xx, its 429, or the gateway itself.',
});
registerEnumType(FineTuningMethodTypeEnum, { name: 'FineTuningMethodType' });

@ObjectType('FineTuningHyperparameters', { description: 'A null value means "auto": the provider chooses.' })
export class FineTuningHyperparametersType {
  @Field(() => Int, { nullable: true }) nEpochs!: number | null;
  @Field(() => Int, { nullable: true }) batchSize!: number | null;
  @Field(() => Float, { nullable: true }) learningRateMultiplier!: number | null;
  @Field(() => Float, { nullable: true, description: 'DPO only.' }) beta!: number | null;
}

@ObjectType('FineTuningMethod')
export class FineTuningMethodType {
  @Field(() => FineTuningMethodTypeEnum) type!: MethodType;
  @Field(() => FineTuningHyperparametersType) hyperparameters!: FineTuningHyperparametersType;
}

@ObjectType('FineTuningJobError')
export class FineTuningJobErrorType {
  @Field() code!: string;
  @Field() message!: string;
  @Field(() => String, { nullable: true }) param!: string | null;
}

@ObjectType('FineTuningJobRetryError', { description: 'The last failure of a step the job monitor retries.' })
export class FineTuningJobRetryErrorType {
  @Field() code!: string;
  @Field() message!: string;
  @Field(() => Int, { nullable: true, description: "The provider call's HTTP status (null for the gateway's own failures)." }) status!: number | null;
}

@ObjectType('FineTuningJobGatewayStatus', { description: 'The job monitor retrying a failed step of the job: why, how often, what happens next.' })
export class FineTuningJobGatewayStatusType {
  @Field() retrying!: boolean;
  @Field(() => FineTuningRetryReasonEnum) reason!: RetryReason;
  @Field(() => Int, { description: 'Failed attempts in a row.' }) attempts!: number;
  @Field() nextAttemptAt!: Date;
  @Field(() => Date, {
    nullable: true,
    description: 'When the job fails as `provider_unreachable` if it still cannot be submitted; null once submitted (followed until it ends).',
  })
  failsAt!: Date | null;
  @Field(() => FineTuningJobRetryErrorType) lastError!: FineTuningJobRetryErrorType;
}

@ObjectType('FineTuningJob', { description: 'A hosted fine-tuning job, run at a provider with a stored integration and monitored by the gateway.' })
export class FineTuningJobType {
  @Field(() => ID) id!: string;
  @Field(() => FineTuningJobStatusEnum) status!: JobStatus;
  @Field({ description: 'The base model, as given at creation.' }) model!: string;
  @Field(() => String, { nullable: true, description: 'Set once the job has succeeded.' }) fineTunedModel!: string | null;
  @Field(() => ID) organisationId!: string;
  @Field(() => ID) workspaceId!: string;
  @Field({ description: 'The provider running the job, e.g. `openai`.' }) provider!: string;
  @Field({ description: 'The stored integration whose credentials run the job, as `@slug`.' }) integration!: string;
  @Field(() => ID, { description: 'The gateway file id of the training data (see `trainingFile`).' }) trainingFileId!: string;
  @Field(() => ID, { nullable: true }) validationFileId!: string | null;
  @Field(() => String, { nullable: true }) suffix!: string | null;
  @Field(() => Int, { description: 'The one given, or one chosen at random at creation (as OpenAI does).' }) seed!: number;
  @Field(() => FineTuningMethodType) method!: FineTuningMethodType;
  @Field(() => FineTuningHyperparametersType) hyperparameters!: FineTuningHyperparametersType;
  @Field(() => GraphQLJSONObject, { nullable: true, description: 'Up to 16 string key-value pairs.' }) metadata!: Record<string, string> | null;
  @Field(() => FineTuningJobErrorType, { nullable: true, description: 'Why the job failed.' }) error!: FineTuningJobErrorType | null;
  @Field(() => GraphQLSafeInt, { nullable: true }) trainedTokens!: number | null;
  @Field(() => [String], { description: "The provider's result file ids." }) resultFiles!: string[];
  @Field() createdAt!: Date;
  @Field(() => Date, { nullable: true }) finishedAt!: Date | null;
  @Field(() => Date, { nullable: true }) estimatedFinish!: Date | null;
  @Field(() => FineTuningJobGatewayStatusType, {
    nullable: true,
    description: 'Null while nothing is amiss; set while the job monitor retries a failed step (the provider cannot be reached, say).',
  })
  gatewayStatus!: FineTuningJobGatewayStatusType | null;
}

@ObjectType('FineTuningJobPage')
export class FineTuningJobPageType {
  @Field(() => [FineTuningJobType], { complexity: itemCost }) items!: FineTuningJobType[];
  @Field() hasMore!: boolean;
}

@ObjectType('FineTuningJobEvent', { description: "A job event: the provider's, or a status change the gateway recorded." })
export class FineTuningJobEventType {
  @Field(() => ID) id!: string;
  @Field(() => ID) fineTuningJobId!: string;
  @Field() createdAt!: Date;
  @Field(() => String, { description: '`info`, `warn` or `error`.' }) level!: EventLevel;
  @Field() message!: string;
  @Field(() => String, { nullable: true, description: '`message` or `metrics`.' }) type!: EventType | null;
  @Field(() => GraphQLJSON, { nullable: true }) data!: unknown;
}

@ObjectType('FineTuningJobCheckpoint', { description: 'A model checkpoint the provider reported, ready to use.' })
export class FineTuningJobCheckpointType {
  @Field(() => ID) id!: string;
  @Field(() => ID) fineTuningJobId!: string;
  @Field() createdAt!: Date;
  @Field() fineTunedModelCheckpoint!: string;
  @Field(() => Int) stepNumber!: number;
  @Field(() => GraphQLJSONObject) metrics!: Record<string, number>;
}
