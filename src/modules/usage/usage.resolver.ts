import { Args, Ctx, Query, Resolver } from 'type-graphql';
import type { AppContext } from '../../context';
import { pageCost } from '../../graphql/cost';
import { LogArgs, LogPageType, UsageArgs, UsagePageType } from './usage.types';

const defined = <T extends object>(args: T) => Object.fromEntries(Object.entries(args).filter(([, v]) => v !== undefined && v !== null));

/** `usage` and `logs`: the same service methods as REST, in the caller's scope (workspace key: its workspace; organisation key: all). */
@Resolver()
export class UsageResolver {
  @Query(() => UsagePageType, { description: "Chat calls' tokens per time bucket (OpenAI's Usage API).", complexity: pageCost('limit', 31) })
  async usage(@Ctx() ctx: AppContext, @Args(() => UsageArgs) args: UsageArgs) {
    return ctx.services.usage.service.completions(ctx.caller, defined(args));
  }

  @Query(() => LogPageType, { description: 'The request log, newest first.', complexity: pageCost('limit', 20) })
  async logs(@Ctx() ctx: AppContext, @Args(() => LogArgs) args: LogArgs) {
    const page = await ctx.services.usage.service.log(ctx.caller, defined(args));
    return {
      hasMore: page.hasMore,
      entries: page.entries.map(({ id, time, requestId, ...row }) => ({ ...row, id: String(id), createdAt: time, providerRequestId: requestId })),
    };
  }
}

export const usageGraphQL = { resolvers: [UsageResolver] };
