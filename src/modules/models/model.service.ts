import type { Scope } from '../../auth/scope';
import { GatewayError } from '../../errors';
import type { HostedJob } from '../fine-tuning/fine-tuning.model';
import { servedModelOf, type ServedModel } from './model.model';
import type { ModelRepository } from './model.repository';

/** Unknown and another workspace's model answer alike (api.md §9), in OpenAI's words. */
export const modelNotFound = (ref: string) =>
  new GatewayError('not_found', `The model '${ref}' does not exist or you do not have access to it`, { path: 'model', code: 'model_not_found' });

/** The workspace's fine-tuned models (`GET /v1/models`, GraphQL `models`), and the job that serves each. */
export class ModelService {
  constructor(private readonly models: ModelRepository) {}

  async list(scope: Scope): Promise<ServedModel[]> {
    return (await this.models.servingJobs(scope)).flatMap((job) => servedModelOf(job) ?? []);
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
