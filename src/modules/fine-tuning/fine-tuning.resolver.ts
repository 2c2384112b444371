import { Arg, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root } from 'type-graphql';
import type { GraphQLContext } from '../../graphql/context';
import { parseInput } from '../../validation/parse';
import { toFileType } from '../files/file.mapper';
import { FileType } from '../files/file.types';
import { CreateFineTuningJobInputType, type FineTuningHyperparametersInputType } from './fine-tuning.inputs';
import { toCheckpointType, toEventType, toJobType } from './fine-tuning.mapper';
import { listCheckpointsSchema, listEventsSchema } from './fine-tuning.schemas';
import { FineTuningJobCheckpointType, FineTuningJobEventType, FineTuningJobPageType, FineTuningJobType } from './fine-tuning.types';

const scopeOfJob = (job: FineTuningJobType) => ({ organisationId: job.organisationId, workspaceId: job.workspaceId });

/** Drops unset (null/undefined) values, as a REST caller would leave fields out. */
const defined = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== null));

const snakeHyperparameters = (hp: FineTuningHyperparametersInputType) =>
  defined({ n_epochs: hp.nEpochs, batch_size: hp.batchSize, learning_rate_multiplier: hp.learningRateMultiplier, beta: hp.beta });

/** The GraphQL input in the service's (REST-shaped) input: camelCase top level, OpenAI's snake_case inside. */
function toServiceInput(input: CreateFineTuningJobInputType): Record<string, unknown> {
  const method = input.method
    ? { type: input.method.type, [input.method.type]: input.method.hyperparameters ? { hyperparameters: snakeHyperparameters(input.method.hyperparameters) } : {} }
    : undefined;
  let gatewayOptions = input.gatewayOptions ?? undefined;
  if (input.integration != null) {
    const extra = gatewayOptions && typeof gatewayOptions === 'object' && !Array.isArray(gatewayOptions) ? gatewayOptions : {};
    gatewayOptions = { ...extra, 'x-gateway-provider': input.integration };
  }
  const p = input.providerOptions;
  const providerOptions = p
    ? defined({ model: p.model, role_arn: p.roleArn, job_name: p.jobName, output_file: p.outputFile, training_type: p.trainingType })
    : undefined;
  return defined({
    model: input.model,
    trainingFile: input.trainingFile,
    validationFile: input.validationFile,
    suffix: input.suffix,
    seed: input.seed,
    method,
    metadata: input.metadata,
    gatewayOptions,
    providerOptions,
    workspaceId: input.workspaceId,
  });
}

@Resolver(() => FineTuningJobType)
export class FineTuningJobResolver {
  @Query(() => FineTuningJobType)
  async fineTuningJob(@Ctx() ctx: GraphQLContext, @Arg('id', () => ID) id: string, @Arg('workspaceId', () => String, { nullable: true }) workspaceId?: string) {
    return toJobType(await ctx.services.fineTuning.get(await ctx.scope(workspaceId), id));
  }

  @Query(() => FineTuningJobPageType, { description: 'Hosted jobs, newest first.' })
  async fineTuningJobs(
    @Ctx() ctx: GraphQLContext,
    @Arg('limit', () => Int, { nullable: true, description: '1..100, default 20.' }) limit?: number,
    @Arg('after', () => String, { nullable: true, description: 'The id of the last job of the previous page.' }) after?: string,
    @Arg('workspaceId', () => String, { nullable: true }) workspaceId?: string,
  ) {
    const page = await ctx.services.fineTuning.list(await ctx.scope(workspaceId), defined({ limit, after }));
    return { items: page.items.map(toJobType), hasMore: page.hasMore };
  }

  @Mutation(() => FineTuningJobType, { description: 'Records the job (VALIDATING_FILES); the gateway then uploads the data, submits and monitors it.' })
  async createFineTuningJob(@Ctx() ctx: GraphQLContext, @Arg('input', () => CreateFineTuningJobInputType) input: CreateFineTuningJobInputType) {
    return toJobType(await ctx.services.fineTuning.create(await ctx.scope(input.workspaceId), toServiceInput(input)));
  }

  @Mutation(() => FineTuningJobType, { description: 'Cancels the job at the provider (or here, when not submitted yet).' })
  async cancelFineTuningJob(@Ctx() ctx: GraphQLContext, @Arg('id', () => ID) id: string, @Arg('workspaceId', () => String, { nullable: true }) workspaceId?: string) {
    return toJobType(await ctx.services.fineTuning.cancel(await ctx.scope(workspaceId), id));
  }

  @FieldResolver(() => FileType, { nullable: true, description: 'The training file; null once it has been deleted.' })
  async trainingFile(@Root() job: FineTuningJobType, @Ctx() ctx: GraphQLContext) {
    const file = await ctx.loaders.fineTuning.fileById.load({ scope: scopeOfJob(job), id: job.trainingFileId });
    return file ? toFileType(file) : null;
  }

  @FieldResolver(() => FileType, { nullable: true })
  async validationFile(@Root() job: FineTuningJobType, @Ctx() ctx: GraphQLContext) {
    if (!job.validationFileId) return null;
    const file = await ctx.loaders.fineTuning.fileById.load({ scope: scopeOfJob(job), id: job.validationFileId });
    return file ? toFileType(file) : null;
  }

  @FieldResolver(() => [FineTuningJobEventType], { description: 'The newest events, newest first.' })
  async events(@Root() job: FineTuningJobType, @Ctx() ctx: GraphQLContext, @Arg('limit', () => Int, { nullable: true, description: '1..100, default 20.' }) limit?: number) {
    const { limit: take } = parseInput(listEventsSchema, defined({ limit }));
    const events = await ctx.loaders.fineTuning.eventsByJob(take).load({ scope: scopeOfJob(job), id: job.id });
    return events.map(toEventType);
  }

  @FieldResolver(() => [FineTuningJobCheckpointType], { description: 'The newest checkpoints, newest first.' })
  async checkpoints(
    @Root() job: FineTuningJobType,
    @Ctx() ctx: GraphQLContext,
    @Arg('limit', () => Int, { nullable: true, description: '1..100, default 10.' }) limit?: number,
  ) {
    const { limit: take } = parseInput(listCheckpointsSchema, defined({ limit }));
    const checkpoints = await ctx.loaders.fineTuning.checkpointsByJob(take).load({ scope: scopeOfJob(job), id: job.id });
    return checkpoints.map(toCheckpointType);
  }
}
