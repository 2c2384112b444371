import { Arg, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root } from 'type-graphql';
import type { Scope } from '../../auth/scope';
import type { AppContext } from '../../context';
import { listCost } from '../../graphql/cost';
import { InputScope, WorkspaceScope } from '../../graphql/scope';
import { CreatePromptPartialInputType, UpdatePromptPartialInputType } from './partial.inputs';
import { partialLoaders } from './partial.loaders';
import { toCollectionType, toPromptPartialType, toPromptPartialVersionType } from './partial.mapper';
import { CollectionType, PromptPartialType, PromptPartialVersionType } from './partial.types';
import { loadByIds, registerEntity } from '../../graphql/entity';

// Federation entities: references resolve through the same service methods as the queries (graphql/entity.ts).
registerEntity(
  CollectionType,
  loadByIds((scope, ids, ctx: AppContext) => ctx.services.partials.collectionsByIds(scope, ids), toCollectionType),
);
registerEntity(
  PromptPartialVersionType,
  loadByIds((scope, ids, ctx: AppContext) => ctx.services.partials.versionsByIds(scope, ids), toPromptPartialVersionType),
);
registerEntity(
  PromptPartialType,
  loadByIds((scope, ids, ctx: AppContext) => ctx.services.partials.findMany(scope, ids), toPromptPartialType),
);

const scopeOfPartial = (partial: PromptPartialType) => ({ organisationId: partial.organisationId, workspaceId: partial.workspaceId });

@Resolver(() => PromptPartialType)
export class PromptPartialResolver {
  @Query(() => PromptPartialType, { description: 'A partial by id or slug (archived ones too).' })
  async promptPartial(@Ctx() ctx: AppContext, @Arg('idOrSlug', () => String) idOrSlug: string, @WorkspaceScope() scope: Scope) {
    return toPromptPartialType((await ctx.services.partials.get(scope, idOrSlug)).partial);
  }

  @Query(() => [PromptPartialType], { description: 'Active partials unless `status` asks for archived ones.', complexity: listCost(null, 50) })
  async promptPartials(
    @Ctx() ctx: AppContext,
    @WorkspaceScope() scope: Scope,
    @Arg('collectionId', () => ID, { nullable: true }) collectionId?: string | null,
    @Arg('status', () => String, { nullable: true }) status?: string | null,
  ) {
    const rows = await ctx.services.partials.list(scope, { collectionId: collectionId ?? undefined, status: status ?? undefined });
    return rows.map(toPromptPartialType);
  }

  @Mutation(() => PromptPartialType)
  async createPromptPartial(
    @Ctx() ctx: AppContext,
    @Arg('input', () => CreatePromptPartialInputType) input: CreatePromptPartialInputType,
    @InputScope() scope: Scope,
  ) {
    const { workspaceId: _chosenByScope, ...data } = input;
    return toPromptPartialType((await ctx.services.partials.create(scope, data)).partial);
  }

  @Mutation(() => PromptPartialType, { description: 'A changed `string` saves a new version; makePromptPartialVersionDefault publishes it.' })
  async updatePromptPartial(
    @Ctx() ctx: AppContext,
    @Arg('idOrSlug', () => String) idOrSlug: string,
    @Arg('input', () => UpdatePromptPartialInputType) input: UpdatePromptPartialInputType,
    @WorkspaceScope() scope: Scope,
  ) {
    return toPromptPartialType((await ctx.services.partials.update(scope, idOrSlug, { ...input })).partial);
  }

  @Mutation(() => Boolean)
  async deletePromptPartial(@Ctx() ctx: AppContext, @Arg('idOrSlug', () => String) idOrSlug: string, @WorkspaceScope() scope: Scope) {
    await ctx.services.partials.delete(scope, idOrSlug);
    return true;
  }

  @Mutation(() => PromptPartialType, { description: 'Publishes version `version`: the one reads of the partial return.' })
  async makePromptPartialVersionDefault(
    @Ctx() ctx: AppContext,
    @Arg('idOrSlug', () => String) idOrSlug: string,
    @Arg('version', () => Int) version: number,
    @WorkspaceScope() scope: Scope,
  ) {
    return toPromptPartialType((await ctx.services.partials.makeDefault(scope, idOrSlug, { version })).partial);
  }

  @FieldResolver(() => [PromptPartialVersionType], { description: 'All versions, newest first.', complexity: listCost(null, 50) })
  async versions(@Root() partial: PromptPartialType, @Ctx() ctx: AppContext) {
    const versions = await ctx.loaders.get(partialLoaders).versionsByPartial.load({ scope: scopeOfPartial(partial), id: partial.id });
    return versions.map(toPromptPartialVersionType);
  }

  @FieldResolver(() => PromptPartialVersionType, { description: 'The default (published) version.' })
  async defaultVersion(@Root() partial: PromptPartialType, @Ctx() ctx: AppContext) {
    const scope = scopeOfPartial(partial);
    const loaders = ctx.loaders.get(partialLoaders);
    if (partial.defaultVersionId) return toPromptPartialVersionType(await loaders.versionById.load({ scope, id: partial.defaultVersionId }));
    const [newest] = await loaders.versionsByPartial.load({ scope, id: partial.id });
    return toPromptPartialVersionType(newest);
  }

  @FieldResolver(() => CollectionType)
  async collection(@Root() partial: PromptPartialType, @Ctx() ctx: AppContext) {
    return toCollectionType(await ctx.loaders.get(partialLoaders).collectionById.load({ scope: scopeOfPartial(partial), id: partial.collectionId }));
  }
}

export const partialsGraphQL = { resolvers: [PromptPartialResolver] };
