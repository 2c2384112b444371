import { Arg, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import type { GraphQLContext } from '../../graphql/context';
import { CreateIntegrationInputType } from './integration.inputs';
import { toIntegrationType } from './integration.mapper';
import { IntegrationType } from './integration.types';

@Resolver(() => IntegrationType)
export class IntegrationResolver {
  @Query(() => IntegrationType)
  async integration(
    @Ctx() ctx: GraphQLContext,
    @Arg('slug', () => String) slug: string,
    @Arg('workspaceId', () => String, { nullable: true }) workspaceId?: string,
  ) {
    return toIntegrationType(await ctx.services.integrations.get(await ctx.scope(workspaceId), slug));
  }

  @Query(() => [IntegrationType])
  async integrations(@Ctx() ctx: GraphQLContext, @Arg('workspaceId', () => String, { nullable: true }) workspaceId?: string) {
    return (await ctx.services.integrations.list(await ctx.scope(workspaceId))).map(toIntegrationType);
  }

  @Mutation(() => IntegrationType)
  async createIntegration(@Ctx() ctx: GraphQLContext, @Arg('input', () => CreateIntegrationInputType) input: CreateIntegrationInputType) {
    return toIntegrationType(await ctx.services.integrations.create(await ctx.scope(input.workspaceId), { ...input }));
  }

  @Mutation(() => Boolean)
  async deleteIntegration(
    @Ctx() ctx: GraphQLContext,
    @Arg('slug', () => String) slug: string,
    @Arg('workspaceId', () => String, { nullable: true }) workspaceId?: string,
  ) {
    await ctx.services.integrations.delete(await ctx.scope(workspaceId), slug);
    return true;
  }
}
