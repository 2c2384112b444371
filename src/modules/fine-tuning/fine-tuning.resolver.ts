import { Arg, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root } from 'type-graphql';
import type { Scope } from '../../auth/scope';
import type { AppContext } from '../../context';
import { listCost, pageCost } from '../../graphql/cost';
import { ServiceFieldNames } from '../../graphql/field-names';
import { InputScope, WorkspaceScope } from '../../graphql/scope';
import { parseInput } from '../../validation/parse';
import { toFileType } from '../files/file.mapper';
import { FileType } from '../files/file.types';
import type { Hyperparameters } from './fine-tuning.model';
import { CreateFineTuningJobInputType, type FineTuningHyperparametersInputType, type FineTuningMethodInputType } from './fine-tuning.inputs';
import { fineTuningLoaders } from './fine-tuning.loaders';
import { toCheckpointType, toEventType, toJobType } from './fine-tuning.mapper';
import { listCheckpointsSchema, listEventsSchema, type CreateJobInput } from './fine-tuning.schemas';
import { FineTuningJobCheckpointType, FineTuningJobEventType, FineTuningJobPageType, FineTuningJobType } from './fine-tuning.types';
import { loadByIds, registerEntity } from '../../graphql/entity';

// Federation entities: references resolve through the same service methods as the queries (graphql/entity.ts).
registerEntity(
  FineTuningJobType,
  loadByIds((scope, ids, ctx: AppContext) => ctx.services.fineTuning.findMany(scope, ids), toJobType),
);
registerEntity(
  FineTuningJobEventType,
  loadByIds((scope, ids, ctx: AppContext) => ctx.services.fineTuning.eventsByIds(scope, ids), toEventType),
);
registerEntity(
  FineTuningJobCheckpointType,
  loadByIds((scope, ids, ctx: AppContext) => ctx.services.fineTuning.checkpointsByIds(scope, ids), toCheckpointType),
);

const scopeOfJob = (job: FineTuningJobType) => ({ organisationId: job.organisationId, workspaceId: job.workspaceId });

/** GraphQL leaves a hyperparameter null for "auto"; the service leaves it out. */
function hyperparameters(h: FineTuningHyperparametersInputType | null | undefined): Hyperparameters {
  const out: Hyperparameters = {};
  if (h?.nEpochs != null) out.nEpochs = h.nEpochs;
  if (h?.batchSize != null) out.batchSize = h.batchSize;
  if (h?.learningRateMultiplier != null) out.learningRateMultiplier = h.learningRateMultiplier;
  if (h?.beta != null) out.beta = h.beta;
  return out;
}

/** GraphQL's flat method input in the service's (OpenAI-structured) shape. */
const method = (m: FineTuningMethodInputType): CreateJobInput['method'] =>
  m.type === 'dpo'
    ? { type: 'dpo', dpo: { hyperparameters: hyperparameters(m.hyperparameters) } }
    : { type: 'supervised', supervised: { hyperparameters: hyperparameters(m.hyperparameters) } };

/** `integration: "@slug"` is GraphQL's spelling of `gateway_options["x-gateway-provider"]`. */
function gatewayOptions(input: CreateFineTuningJobInputType): unknown {
  const given = input.gatewayOptions ?? undefined;
  if (input.integration == null) return given;
  return given !== undefined && (typeof given !== 'object' || given === null) ? given : { ...given, 'x-gateway-provider': input.integration };
}

function toServiceInput(input: CreateFineTuningJobInputType): CreateJobInput {
  return {
    model: input.model,
    trainingFile: input.trainingFile,
    validationFile: input.validationFile,
    suffix: input.suffix,
    seed: input.seed,
    method: input.method ? method(input.method) : undefined,
    metadata: input.metadata ?? undefined,
    gatewayOptions: gatewayOptions(input),
    providerOptions: input.providerOptions ?? undefined,
  };
}

@Resolver(() => FineTuningJobType)
export class FineTuningJobResolver {
  @Query(() => FineTuningJobType)
  async fineTuningJob(@Ctx() ctx: AppContext, @Arg('id', () => ID) id: string, @WorkspaceScope() scope: Scope) {
    return toJobType(await ctx.services.fineTuning.get(scope, id));
  }

  @Query(() => FineTuningJobPageType, { description: 'Hosted jobs, newest first.', complexity: pageCost('limit', 20) })
  async fineTuningJobs(
    @Ctx() ctx: AppContext,
    @WorkspaceScope() scope: Scope,
    @Arg('limit', () => Int, { nullable: true, description: '1..100, default 20.' }) limit?: number | null,
    @Arg('after', () => String, { nullable: true, description: 'The id of the last job of the previous page.' }) after?: string | null,
  ) {
    const page = await ctx.services.fineTuning.list(scope, { limit: limit ?? undefined, after: after ?? undefined });
    return { items: page.items.map(toJobType), hasMore: page.hasMore };
  }

  @Mutation(() => FineTuningJobType, { description: 'Records the job (VALIDATING_FILES); the gateway then uploads the data, submits and monitors it.' })
  @ServiceFieldNames({ 'method.supervised': 'method', 'method.dpo': 'method', 'gatewayOptions.x-gateway-provider': 'integration' })
  async createFineTuningJob(
    @Ctx() ctx: AppContext,
    @Arg('input', () => CreateFineTuningJobInputType) input: CreateFineTuningJobInputType,
    @InputScope() scope: Scope,
  ) {
    return toJobType(await ctx.services.fineTuning.create(scope, toServiceInput(input)));
  }

  @Mutation(() => FineTuningJobType, { description: 'Cancels the job at the provider (or here, when not submitted yet).' })
  async cancelFineTuningJob(@Ctx() ctx: AppContext, @Arg('id', () => ID) id: string, @WorkspaceScope() scope: Scope) {
    return toJobType(await ctx.services.fineTuning.cancel(scope, id));
  }

  @FieldResolver(() => FileType, { nullable: true, description: 'The training file; null once it has been deleted.' })
  async trainingFile(@Root() job: FineTuningJobType, @Ctx() ctx: AppContext) {
    const file = await ctx.loaders.get(fineTuningLoaders).fileById.load({ scope: scopeOfJob(job), id: job.trainingFileId });
    return file ? toFileType(file) : null;
  }

  @FieldResolver(() => FileType, { nullable: true })
  async validationFile(@Root() job: FineTuningJobType, @Ctx() ctx: AppContext) {
    if (!job.validationFileId) return null;
    const file = await ctx.loaders.get(fineTuningLoaders).fileById.load({ scope: scopeOfJob(job), id: job.validationFileId });
    return file ? toFileType(file) : null;
  }

  @FieldResolver(() => [FineTuningJobEventType], { description: 'The newest events, newest first.', complexity: listCost('limit', 20) })
  async events(
    @Root() job: FineTuningJobType,
    @Ctx() ctx: AppContext,
    @Arg('limit', () => Int, { nullable: true, description: '1..100, default 20.' }) limit?: number | null,
  ) {
    const { limit: take } = parseInput(listEventsSchema, { limit: limit ?? undefined });
    const events = await ctx.loaders
      .get(fineTuningLoaders)
      .eventsByJob(take)
      .load({ scope: scopeOfJob(job), id: job.id });
    return events.map(toEventType);
  }

  @FieldResolver(() => [FineTuningJobCheckpointType], { description: 'The newest checkpoints, newest first.', complexity: listCost('limit', 10) })
  async checkpoints(
    @Root() job: FineTuningJobType,
    @Ctx() ctx: AppContext,
    @Arg('limit', () => Int, { nullable: true, description: '1..100, default 10.' }) limit?: number | null,
  ) {
    const { limit: take } = parseInput(listCheckpointsSchema, { limit: limit ?? undefined });
    const checkpoints = await ctx.loaders
      .get(fineTuningLoaders)
      .checkpointsByJob(take)
      .load({ scope: scopeOfJob(job), id: job.id });
    return checkpoints.map(toCheckpointType);
  }
}

export const fineTuningGraphQL = { resolvers: [FineTuningJobResolver] };
