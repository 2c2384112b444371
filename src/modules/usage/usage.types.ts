import { GraphQLSafeInt } from 'graphql-scalars';
import { ArgsType, Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import { itemCost } from '../../graphql/cost';
import type { BucketWidth, UsageGroup } from './usage.schemas';

export const UsageBucketWidthEnum = { MINUTE: '1m', HOUR: '1h', DAY: '1d' } as const satisfies Record<string, BucketWidth>;
export const UsageGroupByEnum = { MODEL: 'model', API_KEY_ID: 'api_key_id', PROJECT_ID: 'project_id', BATCH: 'batch' } as const satisfies Record<
  string,
  UsageGroup
>;
registerEnumType(UsageBucketWidthEnum, { name: 'UsageBucketWidth' });
registerEnumType(UsageGroupByEnum, { name: 'UsageGroupBy', description: '`PROJECT_ID` groups by workspace.' });

@ArgsType()
export class UsageArgs {
  @Field(() => Int, { description: 'Unix seconds, inclusive.' }) startTime!: number;
  @Field(() => Int, { nullable: true, description: 'Unix seconds, exclusive; default: now.' }) endTime?: number;
  @Field(() => UsageBucketWidthEnum, { nullable: true }) bucketWidth?: BucketWidth;
  @Field(() => [UsageGroupByEnum], { nullable: true }) groupBy?: UsageGroup[];
  @Field(() => [ID], { nullable: true, description: 'Workspace ids.' }) projectIds?: string[];
  @Field(() => [ID], { nullable: true }) apiKeyIds?: string[];
  @Field(() => [String], { nullable: true }) models?: string[];
  @Field({ nullable: true }) batch?: boolean;
  @Field(() => Int, { nullable: true, description: 'Buckets per page.' }) limit?: number;
  @Field({ nullable: true, description: 'The nextPage of the previous answer.' }) page?: string;
}

@ObjectType('UsageResult', { description: "One group's chat usage in one bucket; a grouping field is null when not grouped by." })
export class UsageResultType {
  @Field(() => GraphQLSafeInt, { description: 'Including cached input tokens.' }) inputTokens!: number;
  @Field(() => GraphQLSafeInt) cachedTokens!: number;
  @Field(() => GraphQLSafeInt) outputTokens!: number;
  @Field(() => GraphQLSafeInt, { description: 'Model calls.' }) requests!: number;
  @Field(() => String, { nullable: true }) model!: string | null;
  @Field(() => ID, { nullable: true }) apiKeyId!: string | null;
  @Field(() => ID, { nullable: true, description: 'The workspace.' }) projectId!: string | null;
  @Field(() => Boolean, { nullable: true }) batch!: boolean | null;
}

@ObjectType('UsageBucket')
export class UsageBucketType {
  @Field(() => Int) startTime!: number;
  @Field(() => Int) endTime!: number;
  @Field(() => [UsageResultType]) results!: UsageResultType[];
}

@ObjectType('UsagePage', { description: "Token sums per time bucket, as OpenAI's Usage API answers them." })
export class UsagePageType {
  @Field(() => [UsageBucketType], { complexity: itemCost }) buckets!: UsageBucketType[];
  @Field() hasMore!: boolean;
  @Field(() => String, { nullable: true }) nextPage!: string | null;
}

@ArgsType()
export class LogArgs {
  @Field({ nullable: true }) model?: string;
  @Field({ nullable: true, description: 'A status code, `success` (below 400) or `error`.' }) status?: string;
  @Field(() => ID, { nullable: true }) apiKeyId?: string;
  @Field(() => Int, { nullable: true }) startTime?: number;
  @Field(() => Int, { nullable: true }) endTime?: number;
  @Field({ nullable: true, description: 'The id of the last entry of the previous page.' }) after?: string;
  @Field(() => Int, { nullable: true }) limit?: number;
}

@ObjectType('LogEntry', { description: 'One model call of the usage ledger; never its prompt or answer.' })
export class LogEntryType {
  @Field(() => ID) id!: string;
  @Field() createdAt!: Date;
  @Field({ description: '`chat` or `fine_tuning`.' }) operation!: string;
  @Field(() => Int, { description: 'The HTTP status the caller got (499: it went away).' }) status!: number;
  @Field() provider!: string;
  @Field(() => String, { nullable: true }) integration!: string | null;
  @Field() model!: string;
  @Field(() => String, { nullable: true }) baseModel!: string | null;
  @Field({ description: '`hosted` or `client`.' }) mode!: string;
  @Field() streamed!: boolean;
  @Field(() => Int) inputTokens!: number;
  @Field(() => Int) cachedTokens!: number;
  @Field(() => Int) outputTokens!: number;
  @Field(() => Int, { nullable: true }) latencyMs!: number | null;
  @Field(() => Int, { nullable: true }) ttftMs!: number | null;
  @Field(() => ID, { nullable: true }) apiKeyId!: string | null;
  @Field(() => ID, { nullable: true }) workspaceId!: string | null;
  @Field(() => String, { nullable: true }) providerRequestId!: string | null;
}

@ObjectType('LogPage')
export class LogPageType {
  @Field(() => [LogEntryType], { complexity: itemCost }) entries!: LogEntryType[];
  @Field() hasMore!: boolean;
}
