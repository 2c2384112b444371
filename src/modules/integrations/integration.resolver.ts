import { Arg, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import type { Scope } from '../../auth/scope';
import type { AppContext } from '../../context';
import { listCost } from '../../graphql/cost';
import { InputScope, WorkspaceScope } from '../../graphql/scope';
import { CreateIntegrationInputType, UpdateIntegrationInputType } from './integration.inputs';
import { toIntegrationType } from './integration.mapper';
import { IntegrationType } from './integration.types';
import { loadByIds, registerEntity } from '../../graphql/entity';

// Federation entities: references resolve through the same service methods as the queries (graphql/entity.ts).
registerEntity(
  IntegrationType,
  loadByIds((scope, ids, ctx: AppContext) => ctx.services.integrations.findMany(scope, ids), toIntegrationType),
);

@Resolver(() => IntegrationType)
export class IntegrationResolver {
  @Query(() => IntegrationType)
  async integration(@Ctx() ctx: AppContext, @Arg('slug', () => String) slug: string, @WorkspaceScope() scope: Scope) {
    return toIntegrationType(await ctx.services.integrations.get(scope, slug));
  }

  @Query(() => [IntegrationType], { complexity: listCost(null, 50) })
  async integrations(@Ctx() ctx: AppContext, @WorkspaceScope() scope: Scope) {
    return (await ctx.services.integrations.list(scope)).map(toIntegrationType);
  }

  @Mutation(() => IntegrationType)
  async createIntegration(
    @Ctx() ctx: AppContext,
    @Arg('input', () => CreateIntegrationInputType) input: CreateIntegrationInputType,
    @InputScope() scope: Scope,
  ) {
    const { workspaceId: _chosenByScope, ...data } = input;
    return toIntegrationType(await ctx.services.integrations.create(scope, data));
  }

  /** Like REST PATCH: the fields given replace the stored ones; `ref` is the id or the slug. */
  @Mutation(() => IntegrationType)
  async updateIntegration(
    @Ctx() ctx: AppContext,
    @Arg('ref', () => String, { description: 'The integration id or slug.' }) ref: string,
    @Arg('input', () => UpdateIntegrationInputType) input: UpdateIntegrationInputType,
    @WorkspaceScope() scope: Scope,
  ) {
    return toIntegrationType(await ctx.services.integrations.update(scope, ref, { ...input }, 'merge'));
  }

  @Mutation(() => Boolean)
  async deleteIntegration(@Ctx() ctx: AppContext, @Arg('slug', () => String) slug: string, @WorkspaceScope() scope: Scope) {
    await ctx.services.integrations.delete(scope, slug);
    return true;
  }
}

export const integrationsGraphQL = { resolvers: [IntegrationResolver] };
