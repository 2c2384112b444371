import { Ctx, FieldResolver, Query, Resolver, Root } from 'type-graphql';
import type { Scope } from '../../auth/scope';
import type { AppContext } from '../../context';
import { listCost } from '../../graphql/cost';
import { WorkspaceScope } from '../../graphql/scope';
import { FineTuningJobType } from '../fine-tuning/fine-tuning.types';
import { toIntegrationModelType, toModelType } from './model.mapper';
import { servedModelOf } from './model.model';
import { ModelType } from './model.types';
import { loadByIds, registerEntity } from '../../graphql/entity';

// Federation entities: references resolve through the same service methods as the queries (graphql/entity.ts).
registerEntity(
  ModelType,
  loadByIds((scope, ids, ctx: AppContext) => ctx.services.models.findMany(scope, ids), toModelType),
);

@Resolver(() => ModelType)
export class ModelResolver {
  @Query(() => [ModelType], {
    description: 'The workspace\'s fine-tuned models, newest job first, then the models its integrations\' providers list, as "@slug/<provider model id>".',
    complexity: listCost(null, 50),
  })
  async models(@Ctx() ctx: AppContext, @WorkspaceScope() scope: Scope) {
    const { served, integrations } = await ctx.services.models.list(scope);
    return [...served.map(toModelType), ...integrations.map(toIntegrationModelType)];
  }
}

/** `FineTuningJob.resultModel`: read off the job itself, no query. */
@Resolver(() => FineTuningJobType)
export class FineTuningJobModelResolver {
  @FieldResolver(() => ModelType, { nullable: true, description: 'The model this job produced, once it has succeeded (see chatCompletion).' })
  resultModel(@Root() job: FineTuningJobType) {
    const model = servedModelOf(job);
    return model ? toModelType(model) : null;
  }
}

export const modelsGraphQL = { resolvers: [ModelResolver, FineTuningJobModelResolver] };
