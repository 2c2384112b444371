import { Arg, Ctx, ID, Int, Mutation, Query, Resolver } from 'type-graphql';
import type { Scope } from '../../auth/scope';
import type { AppContext } from '../../context';
import { pageCost } from '../../graphql/cost';
import { ServiceFieldNames } from '../../graphql/field-names';
import { InputScope, WorkspaceScope } from '../../graphql/scope';
import { toLabelType } from './label.mapper';
import { CreateLabelInputType, UpdateLabelInputType } from './label.inputs';
import { LabelPageType, LabelType } from './label.types';
import { loadByIds, registerEntity } from '../../graphql/entity';

// Federation entities: references resolve through the same service methods as the queries (graphql/entity.ts).
registerEntity(
  LabelType,
  loadByIds((scope, ids, ctx: AppContext) => ctx.services.labels.findMany(scope, ids), toLabelType),
);

@Resolver(() => LabelType)
export class LabelResolver {
  @Query(() => LabelType)
  async label(@Ctx() ctx: AppContext, @Arg('id', () => ID) id: string, @WorkspaceScope() scope: Scope) {
    return toLabelType(await ctx.services.labels.get(scope, id));
  }

  @Query(() => LabelPageType, { complexity: pageCost('pageSize', 50) })
  @ServiceFieldNames({ currentPage: 'page' })
  async labels(
    @Ctx() ctx: AppContext,
    @WorkspaceScope() scope: Scope,
    @Arg('search', () => String, { nullable: true }) search?: string | null,
    @Arg('page', () => Int, { nullable: true, description: 'Zero-based page number.' }) page?: number | null,
    @Arg('pageSize', () => Int, { nullable: true, description: '1..100, default 50.' }) pageSize?: number | null,
  ) {
    const result = await ctx.services.labels.list(scope, { search: search ?? undefined, currentPage: page ?? undefined, pageSize: pageSize ?? undefined });
    return { total: result.total, items: result.items.map(toLabelType) };
  }

  @Mutation(() => LabelType)
  async createLabel(@Ctx() ctx: AppContext, @Arg('input', () => CreateLabelInputType) input: CreateLabelInputType, @InputScope() scope: Scope) {
    const { workspaceId: _chosenByScope, ...data } = input;
    return toLabelType(await ctx.services.labels.create(scope, data));
  }

  @Mutation(() => LabelType)
  async updateLabel(
    @Ctx() ctx: AppContext,
    @Arg('id', () => ID) id: string,
    @Arg('input', () => UpdateLabelInputType) input: UpdateLabelInputType,
    @WorkspaceScope() scope: Scope,
  ) {
    return toLabelType(await ctx.services.labels.update(scope, id, { ...input }));
  }

  @Mutation(() => Boolean)
  async deleteLabel(@Ctx() ctx: AppContext, @Arg('id', () => ID) id: string, @WorkspaceScope() scope: Scope) {
    await ctx.services.labels.delete(scope, id);
    return true;
  }
}

export const labelsGraphQL = { resolvers: [LabelResolver] };
