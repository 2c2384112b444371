import { Arg, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root } from 'type-graphql';
import type { GraphQLContext } from '../../graphql/context';
import { CreatePromptPartialInputType, UpdatePromptPartialInputType } from './partial.inputs';
import { toCollectionType, toPromptPartialType, toPromptPartialVersionType } from './partial.mapper';
import { CollectionType, PromptPartialType, PromptPartialVersionType } from './partial.types';

const scopeOfPartial = (partial: PromptPartialType) => ({ organisationId: partial.organisationId, workspaceId: partial.workspaceId });

@Resolver(() => PromptPartialType)
export class PromptPartialResolver {
  @Query(() => PromptPartialType, { description: 'A partial by id or slug (archived ones too).' })
  async promptPartial(
    @Ctx() ctx: GraphQLContext,
    @Arg('idOrSlug', () => String) idOrSlug: string,
    @Arg('workspaceId', () => String, { nullable: true }) workspaceId?: string,
  ) {
    return toPromptPartialType((await ctx.services.partials.get(await ctx.scope(workspaceId), idOrSlug)).partial);
  }

  @Query(() => [PromptPartialType], { description: 'Active partials unless `status` asks for archived ones.' })
  async promptPartials(
    @Ctx() ctx: GraphQLContext,
    @Arg('collectionId', () => ID, { nullable: true }) collectionId?: string,
    @Arg('status', () => String, { nullable: true }) status?: string,
    @Arg('workspaceId', () => String, { nullable: true }) workspaceId?: string,
  ) {
    const rows = await ctx.services.partials.list(await ctx.scope(workspaceId), { collectionId: collectionId ?? undefined, status: status ?? undefined });
    return rows.map(toPromptPartialType);
  }

  @Mutation(() => PromptPartialType)
  async createPromptPartial(@Ctx() ctx: GraphQLContext, @Arg('input', () => CreatePromptPartialInputType) input: CreatePromptPartialInputType) {
    return toPromptPartialType((await ctx.services.partials.create(await ctx.scope(input.workspaceId), { ...input })).partial);
  }

  @Mutation(() => PromptPartialType, { description: 'A changed `string` saves a new version; makePromptPartialVersionDefault publishes it.' })
  async updatePromptPartial(
    @Ctx() ctx: GraphQLContext,
    @Arg('idOrSlug', () => String) idOrSlug: string,
    @Arg('input', () => UpdatePromptPartialInputType) input: UpdatePromptPartialInputType,
    @Arg('workspaceId', () => String, { nullable: true }) workspaceId?: string,
  ) {
    return toPromptPartialType((await ctx.services.partials.update(await ctx.scope(workspaceId), idOrSlug, { ...input })).partial);
  }

  @Mutation(() => Boolean)
  async deletePromptPartial(
    @Ctx() ctx: GraphQLContext,
    @Arg('idOrSlug', () => String) idOrSlug: string,
    @Arg('workspaceId', () => String, { nullable: true }) workspaceId?: string,
  ) {
    await ctx.services.partials.delete(await ctx.scope(workspaceId), idOrSlug);
    return true;
  }

  @Mutation(() => PromptPartialType, { description: 'Publishes version `version`: the one reads of the partial return.' })
  async makePromptPartialVersionDefault(
    @Ctx() ctx: GraphQLContext,
    @Arg('idOrSlug', () => String) idOrSlug: string,
    @Arg('version', () => Int) version: number,
    @Arg('workspaceId', () => String, { nullable: true }) workspaceId?: string,
  ) {
    return toPromptPartialType((await ctx.services.partials.makeDefault(await ctx.scope(workspaceId), idOrSlug, { version })).partial);
  }

  @FieldResolver(() => [PromptPartialVersionType], { description: 'All versions, newest first.' })
  async versions(@Root() partial: PromptPartialType, @Ctx() ctx: GraphQLContext) {
    const versions = await ctx.loaders.partials.versionsByPartial.load({ scope: scopeOfPartial(partial), id: partial.id });
    return versions.map(toPromptPartialVersionType);
  }

  @FieldResolver(() => PromptPartialVersionType, { description: 'The default (published) version.' })
  async defaultVersion(@Root() partial: PromptPartialType, @Ctx() ctx: GraphQLContext) {
    const scope = scopeOfPartial(partial);
    if (partial.defaultVersionId) return toPromptPartialVersionType(await ctx.loaders.partials.versionById.load({ scope, id: partial.defaultVersionId }));
    const [newest] = await ctx.loaders.partials.versionsByPartial.load({ scope, id: partial.id });
    return toPromptPartialVersionType(newest);
  }

  @FieldResolver(() => CollectionType)
  async collection(@Root() partial: PromptPartialType, @Ctx() ctx: GraphQLContext) {
    return toCollectionType(await ctx.loaders.partials.collectionById.load({ scope: scopeOfPartial(partial), id: partial.collectionId }));
  }
}
