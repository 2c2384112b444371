import { Arg, Ctx, ID, Int, Mutation, Query, Resolver } from 'type-graphql';
import type { GraphQLContext } from '../../graphql/context';
import { toLabelType } from './label.mapper';
import { CreateLabelInputType, UpdateLabelInputType } from './label.inputs';
import { LabelPageType, LabelType } from './label.types';

@Resolver(() => LabelType)
export class LabelResolver {
  @Query(() => LabelType)
  async label(@Ctx() ctx: GraphQLContext, @Arg('id', () => ID) id: string, @Arg('workspaceId', () => String, { nullable: true }) workspaceId?: string) {
    return toLabelType(await ctx.services.labels.get(await ctx.scope(workspaceId), id));
  }

  @Query(() => LabelPageType)
  async labels(
    @Ctx() ctx: GraphQLContext,
    @Arg('workspaceId', () => String, { nullable: true }) workspaceId?: string,
    @Arg('search', () => String, { nullable: true }) search?: string,
    @Arg('page', () => Int, { nullable: true, description: 'Zero-based page number.' }) page?: number,
    @Arg('pageSize', () => Int, { nullable: true, description: '1..100, default 50.' }) pageSize?: number,
  ) {
    const result = await ctx.services.labels.list(await ctx.scope(workspaceId), { search, currentPage: page, pageSize });
    return { total: result.total, items: result.items.map(toLabelType) };
  }

  @Mutation(() => LabelType)
  async createLabel(@Ctx() ctx: GraphQLContext, @Arg('input', () => CreateLabelInputType) input: CreateLabelInputType) {
    return toLabelType(await ctx.services.labels.create(await ctx.scope(input.workspaceId), { ...input }));
  }

  @Mutation(() => LabelType)
  async updateLabel(
    @Ctx() ctx: GraphQLContext,
    @Arg('id', () => ID) id: string,
    @Arg('input', () => UpdateLabelInputType) input: UpdateLabelInputType,
    @Arg('workspaceId', () => String, { nullable: true }) workspaceId?: string,
  ) {
    return toLabelType(await ctx.services.labels.update(await ctx.scope(workspaceId), id, { ...input }));
  }

  @Mutation(() => Boolean)
  async deleteLabel(@Ctx() ctx: GraphQLContext, @Arg('id', () => ID) id: string, @Arg('workspaceId', () => String, { nullable: true }) workspaceId?: string) {
    await ctx.services.labels.delete(await ctx.scope(workspaceId), id);
    return true;
  }
}
