import type { Scope } from '../../auth/scope';
import { GatewayError } from '../../errors';
import type { HostedJob } from '../fine-tuning/fine-tuning.model';
import type { IntegrationModel, IntegrationModels } from './integration-models';
import { servedModelOf, type ServedModel } from './model.model';
import type { ModelRepository } from './model.repository';

/** Unknown and another workspace's model answer alike (api.md §9), in OpenAI's words. */
export const modelNotFound = (ref: string) =>
  new GatewayError('not_found', `The model '${ref}' does not exist or you do not have access to it`, { path: 'model', code: 'model_not_found' });

/** What `GET /v1/models` and GraphQL `models` list: fine-tuned models first, then each integration's. */
export interface ModelCatalogue {
  served: ServedModel[];
  integrations: IntegrationModel[];
}

/**
 * The workspace's fine-tuned models (`GET /v1/models`, GraphQL `models`) and the job that serves each;
 * the list adds the models its integrations' providers list, as `@slug/<id>`.
 */
export class ModelService {
  constructor(
    private readonly models: ModelRepository,
    private readonly integrationModels: Pick<IntegrationModels, 'list' | 'find'>,
  ) {}

  async list(scope: Scope): Promise<ModelCatalogue> {
    const [jobs, integrations] = await Promise.all([this.models.servingJobs(scope), this.integrationModels.list(scope)]);
    return { served: jobs.flatMap((job) => servedModelOf(job) ?? []), integrations };
  }

  /** A model by id: `@slug/<id>` when that integration lists it, else a fine-tuned model. */
  async find(scope: Scope, ref: string): Promise<ServedModel | IntegrationModel> {
    if (!ref.startsWith('@')) return this.get(scope, ref);
    const model = await this.integrationModels.find(scope, ref);
    if (!model) throw modelNotFound(ref);
    return model;
  }

  /** The models with these ids (missing ones left out): GraphQL entity references, one statement. */
  async findMany(scope: Scope, ids: readonly string[]): Promise<ServedModel[]> {
    return ids.length ? (await this.models.servingJobsNamed(scope, ids)).flatMap((job) => servedModelOf(job) ?? []) : [];
  }

  async get(scope: Scope, ref: string): Promise<ServedModel> {
    const model = servedModelOf(await this.servingJob(scope, ref));
    if (!model) throw modelNotFound(ref);
    return model;
  }

  /** The succeeded job of the workspace whose model `ref` names (its `fine_tuned_model` or its job id). */
  async servingJob(scope: Scope, ref: string): Promise<HostedJob> {
    const job = await this.models.servingJob(scope, ref);
    if (!job) throw modelNotFound(ref);
    return job;
  }
}
