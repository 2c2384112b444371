/**
 * Batches (OpenAI's Batch API) in hosted mode. Creating one checks the request, its input file and
 * the route of its lines, records it (`validating`) and leaves the work to the batch runner. The
 * lines go where a hosted chat request with the same model and `gateway_options` would: a fine-tuned
 * model of the workspace to its job's provider and integration, any model to the integration that
 * `x-gateway-provider` names. Reads come from the database.
 */
import type { Scope } from '../../auth/scope';
import { badRequest, GatewayError, invalidField, unsupported } from '../../errors';
import { isUuid, parseInput, type Input } from '../../validation/parse';
import type { ClientModeService } from '../client-mode/client-mode.service';
import type { TrainingFileSource } from '../fine-tuning/fine-tuning.service';
import type { IntegrationService } from '../integrations/integration.service';
import type { ModelService } from '../models/model.service';
import { summariseBatchFile, type BatchFileSummary } from './batch-file';
import { isFinished, type BatchEvent, type GatewayBatch } from './batch.model';
import type { BatchRepository } from './batch.repository';
import type { BatchTarget } from './provider-batch';
import {
  COMPLETION_WINDOW_MS,
  createBatchSchema,
  listBatchesSchema,
  PROVIDER_OPTION,
  RUNNER_OPTION,
  RUNNERS,
  type BatchRunnerName,
  type CreateBatchInput,
  type ListBatchesInput,
} from './batch.schemas';

const RUNNER_PATH = ['gatewayOptions', RUNNER_OPTION];
const PROVIDER_PATH = ['gatewayOptions', PROVIDER_OPTION];

interface Route extends BatchTarget {
  provider: string;
  integrationSlug: string;
}

export class BatchService {
  /** Called when a batch needs the runner soon (created, cancelled): wakes the local runner. */
  private wake: () => void = () => undefined;

  constructor(
    private readonly batches: BatchRepository,
    private readonly files: TrainingFileSource,
    private readonly models: Pick<ModelService, 'servingJob'>,
    private readonly clientMode: Pick<ClientModeService, 'provider'>,
    private readonly integrations: Pick<IntegrationService, 'hostedProvider'>,
  ) {}

  onWork(wake: () => void): void {
    this.wake = wake;
  }

  /** `apiKeyId`: the caller's key, under which the usage ledger records the batch's requests. */
  async create(scope: Scope, input: Input<CreateBatchInput>, apiKeyId: string | null = null): Promise<GatewayBatch> {
    const data = parseInput(createBatchSchema, input);
    const { [PROVIDER_OPTION]: ref, [RUNNER_OPTION]: runnerName, ...settings } = data.gatewayOptions ?? {};
    const requests = await this.inputOf(scope, data.inputFileId, runnerName);
    const { model } = requests;
    const route = ref === undefined ? await this.hostedRoute(scope, model, settings) : await this.integrationRoute(scope, ref, settings, model);
    const { runner, why } = chooseRunner(runnerName, route, requests);
    const now = Date.now();
    const created = await this.batches.create(
      scope,
      {
        endpoint: data.endpoint,
        completionWindow: data.completionWindow,
        inputFileId: data.inputFileId,
        model,
        runner,
        provider: route.provider,
        integrationSlug: route.integrationSlug,
        gatewayOptions: ref === undefined ? settings : { ...settings, [PROVIDER_OPTION]: ref },
        metadata: data.metadata ?? null,
        apiKeyId,
        createdAt: new Date(now),
        expiresAt: new Date(now + COMPLETION_WINDOW_MS),
      },
      {
        level: 'info',
        message: `Created batch: its requests go to ${route.provider} with integration @${route.integrationSlug}, run by the ${runner} runner${why}`,
        data: { status: 'validating', runner, provider: route.provider, integration: `@${route.integrationSlug}` },
      },
    );
    this.wake();
    return created;
  }

  /** Where a stored batch's requests go, resolved as at its creation (the runners call it on every step). */
  async target(scope: Scope, batch: GatewayBatch): Promise<BatchTarget> {
    const { [PROVIDER_OPTION]: ref, ...settings } = batch.gatewayOptions;
    return ref === undefined ? this.hostedRoute(scope, batch.model, settings) : this.integrationRoute(scope, ref, settings, batch.model);
  }

  async get(scope: Scope, id: string): Promise<GatewayBatch> {
    const batch = isUuid(id) ? await this.batches.findById(scope, id) : null;
    if (!batch) throw new GatewayError('not_found', `Batch '${id}' not found`, { code: 'not_found' });
    return batch;
  }

  /** The batches of the scope among `ids` (unknown ids left out), for GraphQL entities. */
  findMany(scope: Scope, ids: readonly string[]): Promise<GatewayBatch[]> {
    const valid = ids.filter(isUuid);
    return valid.length ? this.batches.findManyByIds(scope, valid) : Promise.resolve([]);
  }

  async list(scope: Scope, input: Input<ListBatchesInput> = {}): Promise<{ items: GatewayBatch[]; hasMore: boolean }> {
    const { after, limit } = parseInput(listBatchesSchema, input);
    const page = after === undefined || isUuid(after) ? await this.batches.page(scope, { after, take: limit }) : null;
    if (!page) throw invalidField('after', `no batch has the id '${after ?? ''}'`, 'invalid_cursor');
    return page;
  }

  /**
   * `cancelling` at once; the runner stops sending lines, lets those in flight finish and publishes
   * what is done (`cancelled`). Cancelling a batch already cancelling or cancelled answers it as it is.
   */
  async cancel(scope: Scope, id: string): Promise<GatewayBatch> {
    const batch = await this.get(scope, id);
    if (batch.status === 'cancelling' || batch.status === 'cancelled') return batch;
    const event = { level: 'info' as const, message: 'Cancellation requested: no further requests are sent' };
    const moved = await this.batches.transition(scope, id, ['validating', 'in_progress'], 'cancelling', event, { nextRunAt: new Date() });
    if (moved) {
      this.wake();
      return moved;
    }
    const now = await this.get(scope, id);
    if (now.status === 'cancelling' || now.status === 'cancelled') return now;
    throw badRequest(`Batch '${id}' is ${now.status}${isFinished(now.status) ? ' already' : ''}; it cannot be cancelled`, null, 'batch_not_cancellable');
  }

  /** The newest events of each batch, newest first (GraphQL). */
  events(scope: Scope, ids: readonly string[], take: number): Promise<Map<string, BatchEvent[]>> {
    return this.batches.events(scope, ids, take);
  }

  /**
   * The input file's requests: their model (the upload check made it one per file) and, unless the
   * gateway runner was asked for, how many there are and the fields they set (a provider's batch
   * service may take too few, or not every feature).
   */
  private async inputOf(scope: Scope, fileId: string, runnerName: string | undefined): Promise<BatchFileSummary> {
    const file = await this.files.find(scope, fileId);
    if (!file) throw new GatewayError('not_found', `File '${fileId}' not found`, { path: 'inputFileId', code: 'not_found' });
    if (file.purpose !== 'batch')
      throw invalidField('inputFileId', `names a file with purpose '${file.purpose}'; upload the requests with purpose 'batch'`, 'invalid_file_purpose');
    const summary = await summariseBatchFile(await this.files.openContent(scope, fileId), runnerName === 'gateway');
    if (!summary) throw invalidField('inputFileId', 'names a file without requests', 'invalid_batch_file');
    return summary;
  }

  /** A fine-tuned model of the workspace: its job's provider and integration, and its model there. */
  private async hostedRoute(scope: Scope, model: string, settings: Record<string, string>): Promise<Route> {
    let job;
    try {
      job = await this.models.servingJob(scope, model);
    } catch (err) {
      if (!(err instanceof GatewayError) || err.kind !== 'not_found') throw err;
      throw invalidField(
        'inputFileId',
        `holds requests for '${model}', which is not a fine-tuned model of this workspace; to send them to a provider's model, ` +
          `name its integration in gateway_options: {"${PROVIDER_OPTION}": "@slug"}`,
        // Not `model_not_found`: that code is the 404 of a model the caller asks for directly.
        'unknown_model',
      );
    }
    const client = await this.integrations.hostedProvider(scope, job, 'inputFileId', settings);
    const providerModel = job.servingModel ?? job.fineTunedModel ?? model;
    return { provider: job.provider, integrationSlug: job.integrationSlug, client, model: providerModel, hosted: true, baseModel: job.model };
  }

  /** `x-gateway-provider: @slug`: that integration, with the other options as its settings (checked as chat checks them). */
  private async integrationRoute(scope: Scope, ref: string, settings: Record<string, string>, model: string): Promise<Route> {
    if (!ref.startsWith('@')) throw invalidField(PROVIDER_PATH, 'must name a stored integration as "@slug" (a batch runs with stored credentials)');
    const client = await this.clientMode.provider(() => Promise.resolve(scope), { ...settings, [PROVIDER_OPTION]: ref });
    return { provider: client.name, integrationSlug: ref.slice(1), client, model, hosted: false, baseModel: null };
  }
}

/**
 * The runner asked for, or by default `provider` where the provider's batch service runs the model,
 * this many requests and the fields they set, and `gateway` elsewhere; `why` says in the creation
 * event why the default fell on the gateway.
 */
function chooseRunner(name: string | undefined, route: Route, requests: BatchFileSummary): { runner: BatchRunnerName; why: string } {
  if (name !== undefined && !(RUNNERS as readonly string[]).includes(name)) throw invalidField(RUNNER_PATH, `must be one of ${RUNNERS.join(', ')}`);
  if (name === 'gateway') return { runner: 'gateway', why: '' };
  const refusal = route.client.batchRefusal({ model: route.model, hosted: route.hosted, count: requests.count, fields: requests.fields });
  if (refusal === null) return { runner: 'provider', why: '' };
  if (name === 'provider') throw unsupported(`The provider runner cannot run this batch: ${refusal}`, RUNNER_PATH);
  return { runner: 'gateway', why: ` (${refusal})` };
}
