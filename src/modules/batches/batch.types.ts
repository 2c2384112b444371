import { GraphQLJSONObject, GraphQLSafeInt } from 'graphql-scalars';
import { Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import { itemCost } from '../../graphql/cost';
import type { BatchEvent, BatchStatus } from './batch.model';
import type { BatchRunnerName } from './batch.schemas';

/** The REST status values; GraphQL names are the same upper-cased. */
export const BatchStatusEnum = {
  VALIDATING: 'validating',
  FAILED: 'failed',
  IN_PROGRESS: 'in_progress',
  FINALIZING: 'finalizing',
  COMPLETED: 'completed',
  EXPIRED: 'expired',
  CANCELLING: 'cancelling',
  CANCELLED: 'cancelled',
} as const satisfies Record<string, BatchStatus>;

export const BatchRunnerEnum = { GATEWAY: 'gateway', PROVIDER: 'provider' } as const satisfies Record<string, BatchRunnerName>;

registerEnumType(BatchStatusEnum, { name: 'BatchStatus' });
registerEnumType(BatchRunnerEnum, {
  name: 'BatchRunner',
  description: "GATEWAY: the gateway sends the requests one by one; PROVIDER: the provider's own batch service runs them.",
});

@ObjectType('BatchError', { description: 'Why a batch failed while it was validated.' })
export class BatchErrorType {
  @Field() code!: string;
  @Field() message!: string;
  @Field(() => String, { nullable: true }) param!: string | null;
  @Field(() => Int, { nullable: true, description: 'The line of the input file, when about one.' }) line!: number | null;
}

@ObjectType('BatchRequestCounts')
export class BatchRequestCountsType {
  @Field(() => Int) total!: number;
  @Field(() => Int) completed!: number;
  @Field(() => Int) failed!: number;
}

@ObjectType('BatchEvent', { description: 'A status change or notice of a batch.' })
export class BatchEventType {
  @Field(() => String, { description: '`info`, `warn` or `error`.' }) level!: BatchEvent['level'];
  @Field() message!: string;
  @Field(() => GraphQLJSONObject, { nullable: true, description: 'E.g. {"status": "in_progress", "runner": "gateway"}.' })
  data!: Record<string, unknown> | null;
  @Field() createdAt!: Date;
}

@ObjectType('Batch', { description: "A batch of chat requests (OpenAI's Batch API), run by the gateway with a stored integration." })
export class BatchType {
  @Field(() => ID) id!: string;
  @Field(() => ID) organisationId!: string;
  @Field(() => ID) workspaceId!: string;
  @Field(() => BatchStatusEnum) status!: BatchStatus;
  @Field({ description: 'Always `/v1/chat/completions`.' }) endpoint!: string;
  @Field({ description: 'Always `24h`.' }) completionWindow!: string;
  @Field({ description: 'The model of every request of the input file.' }) model!: string;
  @Field(() => BatchRunnerEnum) runner!: BatchRunnerName;
  @Field({ description: 'The provider the requests go to, e.g. `openai`.' }) provider!: string;
  @Field({ description: 'The stored integration whose credentials send them, as `@slug`.' }) integration!: string;
  @Field(() => ID, { description: 'See `inputFile`.' }) inputFileId!: string;
  @Field(() => ID, { nullable: true, description: 'See `outputFile`.' }) outputFileId!: string | null;
  @Field(() => ID, { nullable: true, description: 'See `errorFile`.' }) errorFileId!: string | null;
  @Field(() => [BatchErrorType], { description: 'Why the batch failed while validated; empty otherwise.' }) errors!: BatchErrorType[];
  @Field(() => BatchRequestCountsType) requestCounts!: BatchRequestCountsType;
  @Field(() => GraphQLSafeInt) inputTokens!: number;
  @Field(() => GraphQLSafeInt) outputTokens!: number;
  @Field(() => GraphQLJSONObject, { nullable: true, description: 'Up to 16 string key-value pairs.' }) metadata!: Record<string, string> | null;
  @Field() createdAt!: Date;
  @Field(() => Date, { nullable: true }) inProgressAt!: Date | null;
  @Field({ description: 'The end of the completion window: requests not done by then fail as `batch_expired`.' }) expiresAt!: Date;
  @Field(() => Date, { nullable: true }) finalizingAt!: Date | null;
  @Field(() => Date, { nullable: true }) completedAt!: Date | null;
  @Field(() => Date, { nullable: true }) failedAt!: Date | null;
  @Field(() => Date, { nullable: true }) expiredAt!: Date | null;
  @Field(() => Date, { nullable: true }) cancellingAt!: Date | null;
  @Field(() => Date, { nullable: true }) cancelledAt!: Date | null;
}

@ObjectType('BatchPage')
export class BatchPageType {
  @Field(() => [BatchType], { complexity: itemCost }) items!: BatchType[];
  @Field() hasMore!: boolean;
}
