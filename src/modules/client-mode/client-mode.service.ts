/**
 * Client mode (api.md §5): the caller names the provider per request — `x-gateway-provider: openai`
 * with its own credentials and `x-gateway-*` settings in headers, or `@slug` for a stored
 * integration of its workspace — and the gateway translates and forwards the call, storing
 * nothing. Ids are the provider's own, in and out. Inputs are validated with the same schemas as
 * the hosted API, and settings before any connection is made.
 */
import type { Readable } from 'node:stream';
import type { LazyScope } from '../../auth/scope';
import { invalidField, type FieldPath } from '../../errors';
import { PROVIDER_HEADER, type RequestHeaders } from '../../http/provider-headers';
import { batchIdKind } from '../../providers/batch-ids';
import type { ProviderClient, ProviderRegistry } from '../../providers/registry';
import type { CreateJobInput as ProviderCreateJob, ProviderContent, ProviderFile, ProviderJob, ProviderPage, UploadInput } from '../../providers/types';
import { parseInput, parseQuery, type Input } from '../../validation/parse';
import { checkFilename } from '../files/file.service';
import { listFilesSchema, type ListFilesInput } from '../files/file.schemas';
import {
  createJobSchema,
  listCheckpointsSchema,
  listEventsSchema,
  listJobsSchema,
  requestedJob,
  type CreateJobInput,
  type ListJobsInput,
} from '../fine-tuning/fine-tuning.schemas';
import type { IntegrationSource } from '../integrations/integration.port';

export interface PassThroughUpload {
  filename: string;
  purpose: string | Promise<string>;
  stream: Readable;
}

/** The provider's reference of a file id: a batch input id of ours (batch-ids.ts) opened and checked, any other id as it is. */
const fileReference = (provider: ProviderClient, id: string) => (batchIdKind(id) === 'input' ? provider.batchHandle(id, ['input'], 'fileId').handle : id);

export class ClientModeService {
  constructor(
    private readonly integrations: Pick<IntegrationSource, 'resolve'>,
    private readonly providers: ProviderRegistry,
  ) {}

  /**
   * The provider the request names: a provider name with header settings, or `@slug` (headers may add
   * non-secret settings). Only `@slug` needs the workspace, so only then is the scope looked up.
   */
  async provider(scope: LazyScope, headers: RequestHeaders): Promise<ProviderClient> {
    const named = headers[PROVIDER_HEADER]?.trim() ?? '';
    if (!named) throw invalidField([PROVIDER_HEADER], 'is required in client mode', 'missing_setting');
    if (!named.startsWith('@')) return this.providers.client(this.providers.module(named, [PROVIDER_HEADER]).name, { kind: 'headers', headers });
    return this.integrationProvider(scope, named, headers, [PROVIDER_HEADER]);
  }

  /**
   * The provider of the stored integration `ref` (`@slug`) names, headers adding non-secret settings;
   * a bad or unknown reference is an error about the caller's field `path` (the header, or chat's `model`).
   */
  async integrationProvider(scope: LazyScope, ref: string, headers: RequestHeaders, path: FieldPath | string): Promise<ProviderClient> {
    const integration = await this.integrations.resolve(await scope(), ref, path);
    return this.providers.client(integration.provider, { kind: 'integration', ...integration, overrides: { field: 'headers', values: headers } });
  }

  async uploadFile(scope: LazyScope, headers: RequestHeaders, upload: PassThroughUpload): Promise<ProviderFile> {
    const provider = await this.provider(scope, headers);
    const input: UploadInput = {
      filename: checkFilename(upload.filename),
      purpose: upload.purpose,
      open: () => upload.stream,
      model: headers['x-gateway-provider-model'],
    };
    const file = await provider.uploadFile(input);
    return file.purpose === 'batch' ? { ...file, id: provider.batchInputId(file.id) } : file;
  }

  async listFiles(scope: LazyScope, headers: RequestHeaders, query: Input<ListFilesInput> = {}): Promise<ProviderPage<ProviderFile>> {
    const { purpose, limit, order, after } = parseQuery(listFilesSchema, query);
    return (await this.provider(scope, headers)).listFiles({ purpose, limit, order, after });
  }

  async getFile(scope: LazyScope, headers: RequestHeaders, id: string): Promise<ProviderFile> {
    const provider = await this.provider(scope, headers);
    const file = await provider.getFile(fileReference(provider, id));
    // Storage keeps no purpose: an input file id of ours is a batch file's.
    return { ...file, id, ...(batchIdKind(id) === 'input' ? { purpose: 'batch' } : {}) };
  }

  async fileContent(scope: LazyScope, headers: RequestHeaders, id: string): Promise<ProviderContent> {
    const provider = await this.provider(scope, headers);
    return provider.fileContent(fileReference(provider, id));
  }

  async deleteFile(scope: LazyScope, headers: RequestHeaders, id: string): Promise<void> {
    const provider = await this.provider(scope, headers);
    await provider.deleteFile(fileReference(provider, id));
  }

  async createJob(scope: LazyScope, headers: RequestHeaders, body: Input<CreateJobInput>): Promise<ProviderJob> {
    const data = parseInput(createJobSchema, body);
    if (data.gatewayOptions !== undefined) {
      throw invalidField('gatewayOptions', `is for hosted jobs; in client mode send settings as headers (${PROVIDER_HEADER} names the provider)`);
    }
    const { method, legacy, providerModel, providerOptions } = requestedJob(data);
    const input: ProviderCreateJob = {
      model: providerModel ?? data.model,
      trainingFile: data.trainingFile,
      validationFile: data.validationFile,
      suffix: data.suffix,
      seed: data.seed,
      method,
      legacyHyperparameters: legacy,
      metadata: data.metadata,
      options: providerOptions,
    };
    return (await this.provider(scope, headers)).createJob(input);
  }

  async listJobs(scope: LazyScope, headers: RequestHeaders, query: Input<ListJobsInput> = {}): Promise<ProviderPage<ProviderJob>> {
    const { after, limit } = parseQuery(listJobsSchema, query);
    return (await this.provider(scope, headers)).listJobs({ after, limit });
  }

  async getJob(scope: LazyScope, headers: RequestHeaders, id: string): Promise<ProviderJob> {
    return (await this.provider(scope, headers)).getJob(id);
  }

  async cancelJob(scope: LazyScope, headers: RequestHeaders, id: string): Promise<ProviderJob> {
    return (await this.provider(scope, headers)).cancelJob(id);
  }

  async listEvents(scope: LazyScope, headers: RequestHeaders, id: string, query: Input<ListJobsInput> = {}) {
    const { after, limit } = parseQuery(listEventsSchema, query);
    return (await this.provider(scope, headers)).listEvents(id, { after, limit });
  }

  async listCheckpoints(scope: LazyScope, headers: RequestHeaders, id: string, query: Input<ListJobsInput> = {}) {
    const { after, limit } = parseQuery(listCheckpointsSchema, query);
    return (await this.provider(scope, headers)).listCheckpoints(id, { after, limit });
  }
}
