import { Arg, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root } from 'type-graphql';
import type { Scope } from '../../auth/scope';
import type { AppContext } from '../../context';
import { listCost, pageCost } from '../../graphql/cost';
import { loadByIds, registerEntity } from '../../graphql/entity';
import { ServiceFieldNames } from '../../graphql/field-names';
import { scopedLoader } from '../../graphql/scoped-loader';
import { InputScope, WorkspaceScope } from '../../graphql/scope';
import { parseInput } from '../../validation/parse';
import { toFileType } from '../files/file.mapper';
import type { GatewayFile } from '../files/file.repository';
import { FileType } from '../files/file.types';
import { CreateBatchInputType } from './batch.inputs';
import { toBatchEventType, toBatchType } from './batch.mapper';
import type { BatchEvent } from './batch.model';
import { BATCH_ENDPOINT, COMPLETION_WINDOW, listBatchesSchema, PROVIDER_OPTION, type CreateBatchInput } from './batch.schemas';
import { BatchEventType, BatchPageType, BatchType } from './batch.types';

// Federation entities: references resolve through the same service method as the queries (graphql/entity.ts).
registerEntity(
  BatchType,
  loadByIds((scope, ids, ctx: AppContext) => ctx.services.batches.findMany(scope, ids), toBatchType),
);

const scopeOf = (batch: BatchType) => ({ organisationId: batch.organisationId, workspaceId: batch.workspaceId });

/** The batches domain's per-request DataLoaders. */
function batchLoaders({ services }: AppContext) {
  return {
    /** Key: a file id; value: the file, or null once deleted (batches keep their file ids). */
    fileById: scopedLoader<GatewayFile | null>(
      async (scope, ids) => new Map((await services.files.findMany(scope, ids)).map((file) => [file.id, file])),
      () => null,
    ),
    eventsByBatch: new Map<number, ReturnType<typeof eventsLoader>>(),
  };
}

const eventsLoader = (ctx: AppContext, limit: number) =>
  scopedLoader<BatchEvent[]>(
    (scope, ids) => ctx.services.batches.events(scope, ids, limit),
    () => [],
  );

/** `integration: "@slug"` is GraphQL's spelling of `gateway_options["x-gateway-provider"]`. */
function gatewayOptions(input: CreateBatchInputType): unknown {
  const given = input.gatewayOptions ?? undefined;
  if (input.integration == null) return given;
  return given !== undefined && (typeof given !== 'object' || given === null) ? given : { ...given, [PROVIDER_OPTION]: input.integration };
}

const toServiceInput = (input: CreateBatchInputType): CreateBatchInput => ({
  inputFileId: input.inputFile,
  endpoint: input.endpoint ?? BATCH_ENDPOINT,
  completionWindow: input.completionWindow ?? COMPLETION_WINDOW,
  metadata: input.metadata ?? undefined,
  gatewayOptions: gatewayOptions(input),
});

@Resolver(() => BatchType)
export class BatchResolver {
  @Query(() => BatchType)
  async batch(@Ctx() ctx: AppContext, @Arg('id', () => ID) id: string, @WorkspaceScope() scope: Scope) {
    return toBatchType(await ctx.services.batches.get(scope, id));
  }

  @Query(() => BatchPageType, { description: 'Batches, newest first.', complexity: pageCost('limit', 20) })
  async batches(
    @Ctx() ctx: AppContext,
    @WorkspaceScope() scope: Scope,
    @Arg('limit', () => Int, { nullable: true, description: '1..100, default 20.' }) limit?: number | null,
    @Arg('after', () => String, { nullable: true, description: 'The id of the last batch of the previous page.' }) after?: string | null,
  ) {
    const page = await ctx.services.batches.list(scope, { limit: limit ?? undefined, after: after ?? undefined });
    return { items: page.items.map(toBatchType), hasMore: page.hasMore };
  }

  @Mutation(() => BatchType, { description: 'Records the batch (VALIDATING); the gateway then runs its requests.' })
  @ServiceFieldNames({ inputFileId: 'inputFile', 'gatewayOptions.x-gateway-provider': 'integration' })
  async createBatch(@Ctx() ctx: AppContext, @Arg('input', () => CreateBatchInputType) input: CreateBatchInputType, @InputScope() scope: Scope) {
    return toBatchType(await ctx.services.batches.create(scope, toServiceInput(input)));
  }

  @Mutation(() => BatchType, { description: 'CANCELLING at once; CANCELLED once the requests in flight are done, with what finished published.' })
  async cancelBatch(@Ctx() ctx: AppContext, @Arg('id', () => ID) id: string, @WorkspaceScope() scope: Scope) {
    return toBatchType(await ctx.services.batches.cancel(scope, id));
  }

  @FieldResolver(() => FileType, { nullable: true, description: 'The requests; null once the file has been deleted.' })
  inputFile(@Root() batch: BatchType, @Ctx() ctx: AppContext) {
    return this.file(ctx, batch, batch.inputFileId);
  }

  @FieldResolver(() => FileType, { nullable: true, description: 'The answers of the requests that succeeded (purpose BATCH_OUTPUT), once published.' })
  outputFile(@Root() batch: BatchType, @Ctx() ctx: AppContext) {
    return this.file(ctx, batch, batch.outputFileId);
  }

  @FieldResolver(() => FileType, { nullable: true, description: 'The requests that failed, with why (purpose BATCH_OUTPUT), once published.' })
  errorFile(@Root() batch: BatchType, @Ctx() ctx: AppContext) {
    return this.file(ctx, batch, batch.errorFileId);
  }

  @FieldResolver(() => [BatchEventType], { description: 'The newest events, newest first.', complexity: listCost('limit', 20) })
  async events(
    @Root() batch: BatchType,
    @Ctx() ctx: AppContext,
    @Arg('limit', () => Int, { nullable: true, description: '1..100, default 20.' }) limit?: number | null,
  ) {
    const { limit: take } = parseInput(listBatchesSchema, { limit: limit ?? undefined });
    const loaders = ctx.loaders.get(batchLoaders).eventsByBatch;
    let loader = loaders.get(take);
    if (!loader) loaders.set(take, (loader = eventsLoader(ctx, take)));
    return (await loader.load({ scope: scopeOf(batch), id: batch.id })).map(toBatchEventType);
  }

  private async file(ctx: AppContext, batch: BatchType, id: string | null) {
    if (!id) return null;
    const file = await ctx.loaders.get(batchLoaders).fileById.load({ scope: scopeOf(batch), id });
    return file ? toFileType(file) : null;
  }
}

export const batchesGraphQL = { resolvers: [BatchResolver] };
