/**
 * The providers this gateway implements, and the one way to call them: a {@link ProviderClient}
 * bound to a provider and to where its settings come from (request headers, an integration, a
 * hosted job's options). Adding a provider is one folder under `src/providers/` and one line here.
 */
import { GatewayError, invalidField, unsupported, type FieldPath } from '../errors';
import { parseInput } from '../validation/parse';
import { azureOpenAIProvider } from './azure-openai';
import { bedrockProvider } from './bedrock';
import { fireworksProvider } from './fireworks-ai';
import type { HttpPolicy } from './http';
import { isProviderName, type ProviderName } from './names';
import { openaiProvider } from './openai';
import { togetherProvider } from './together-ai';
import { vertexAIProvider } from './vertex-ai';
import { readSettings, type SettingsOrigin } from './settings';
import { parseHostList } from './signed-urls';
import { checkProviderId } from './url';
import type { ProviderTracer } from '../telemetry/tracing';
import { conversionFailure, convertJsonl, keepingBatchLines } from './dataset';
import { checkChatSupport, type ChatSupport } from './chat-fields';
import { extraFields } from './chat-request';
import type {
  ChatRequest,
  CreateJobInput,
  FileListInput,
  JobOptionValues,
  OperationName,
  PageInput,
  ProviderOperationName,
  ProviderContent,
  ProviderOperations,
  UploadInput,
} from './types';
import type { ProviderEnvironment, ProviderModule } from './module';
import type {
  BatchCreateInput,
  BatchHandleKind,
  BatchModelQuery,
  BatchResultLine,
  BatchUploadInput,
  ClientBatchSupport,
  ProviderBatchJob,
  ProviderBatchSupport,
} from './batch';
import { batchId, batchIdKind, openBatchId, type BatchIdKind } from './batch-ids';

export const PROVIDERS: readonly ProviderModule[] = [
  openaiProvider,
  azureOpenAIProvider,
  bedrockProvider,
  vertexAIProvider,
  fireworksProvider,
  togetherProvider,
];

/** The providers' names for descriptions (GraphQL, docs): `openai, azure-openai, … or together-ai`. */
export function providerNames(): string {
  const names = PROVIDERS.map((p) => p.name);
  return `${names.slice(0, -1).join(', ')} or ${names[names.length - 1]}`;
}

/** A provider id a call names, and the parameter that carried it (as the REST paths name them). */
interface NamedId {
  param: 'fileId' | 'jobId';
  value: string;
}
const fileId = (value: string): NamedId => ({ param: 'fileId', value });
const jobId = (value: string): NamedId => ({ param: 'jobId', value });

/** A module that declares no chat support carries only messages of text. */
const NO_CHAT_FIELDS: ChatSupport = { fields: [], unknownFields: false };

export type ProviderCallObserver = (provider: ProviderName, operation: OperationName, errorStatus: number | null) => void;

export class ProviderRegistry {
  private readonly modules = new Map<ProviderName, ProviderModule>(PROVIDERS.map((m) => [m.name, m]));
  /**
   * Each module's environment: its base URLs, which of them the server configured, where its signed
   * URLs may point (its own storage hosts and those its `downloads` variable adds). Built once: the
   * variables are server configuration, and a client is made per request.
   */
  private readonly environments: ReadonlyMap<ProviderName, ProviderEnvironment>;

  constructor(
    /** `GATEWAY_*_BASE_URL`, `GATEWAY_*_DOWNLOAD_HOSTS` and similar variables (server configuration, never a request). */
    private readonly endpointOverrides: Readonly<Record<string, string | undefined>>,
    private readonly http: HttpPolicy,
    /** Told the outcome of every provider call (metrics); `errorStatus` is null on success. */
    private readonly observe: ProviderCallObserver = () => {},
    /** Wraps every provider call in a client span when tracing is on. */
    private readonly tracer: ProviderTracer | null = null,
  ) {
    this.environments = new Map(PROVIDERS.map((m) => [m.name, this.environment(m)]));
  }

  private environment(module: ProviderModule): ProviderEnvironment {
    const overrides = this.endpointOverrides;
    const endpoints = Object.entries(module.endpoints);
    const baseUrls = Object.fromEntries(endpoints.map(([key, spec]) => [key, overrides[spec.env] ?? spec.default]));
    const configured = new Set(endpoints.filter(([, spec]) => overrides[spec.env] !== undefined).map(([key]) => key));
    const downloadHosts = module.downloads ? [...module.downloads.default, ...parseHostList(overrides[module.downloads.env] ?? '')] : [];
    return { baseUrls, configured, downloadHosts, http: this.http };
  }

  /** The module of a provider; `path` names the caller's field in the error when there is none. */
  module(name: string, path: FieldPath | string | null = null): ProviderModule {
    const found = isProviderName(name) ? this.modules.get(name) : undefined;
    if (!found) {
      const known = isProviderName(name)
        ? `'${name}' is not supported by this gateway yet`
        : `'${name}' is not a provider (known: ${[...this.modules.keys()].join(', ')})`;
      throw new GatewayError('unsupported', `Provider ${known}`, { path, code: 'unsupported_provider' });
    }
    return found;
  }

  /** A client for one provider, reading its settings from `origin` (validated on every call). */
  client(name: string, origin: SettingsOrigin): ProviderClient {
    const module = this.module(name);
    return new ProviderClient(module, origin, this.environments.get(module.name) ?? this.environment(module), this.observe, this.tracer);
  }
}

/**
 * One provider with its settings: each operation validates the settings it needs (400 naming the
 * header or option, before any connection), connects, and runs the module's operation, or answers
 * `unsupported_operation` when the provider has none.
 */
export class ProviderClient {
  constructor(
    private readonly module: ProviderModule,
    private readonly origin: SettingsOrigin,
    private readonly env: ProviderEnvironment,
    private readonly observe: ProviderCallObserver = () => {},
    private readonly tracer: ProviderTracer | null = null,
  ) {}

  get name(): ProviderName {
    return this.module.name;
  }

  get title(): string {
    return this.module.title;
  }

  get hosting() {
    return this.module.hosting ?? {};
  }

  supports(op: ProviderOperationName): boolean {
    return typeof this.module.operations[op] === 'function';
  }

  /** Checks the settings `op` needs without calling the provider. */
  checkSettings(op: OperationName | null): void {
    readSettings(this.module.settings, this.origin, op);
  }

  /**
   * `provider_options` (besides `model`) as this provider takes them: only the options its module
   * declares, any other refused naming it and the provider, each value checked by its schema.
   */
  jobOptions(given: JobOptionValues): JobOptionValues {
    const schema = this.module.jobOptions;
    const foreign = Object.keys(given).find((key) => !schema || !Object.hasOwn(schema.shape, key));
    if (foreign !== undefined) {
      const reason = `is not a job option of ${this.module.title}${schema ? '' : ' (it takes none)'}`;
      throw invalidField(['providerOptions', foreign], reason, 'unsupported_parameter');
    }
    return schema ? parseInput(schema, given, ['providerOptions']) : {};
  }

  /** Uploads, converting the dataset to the provider's format on the way when it has its own. */
  uploadFile = async (upload: UploadInput) => {
    const input = { ...upload, purpose: this.storedPurpose(upload.purpose) };
    const format = this.module.dataset;
    // A batch file of client-mode batches is stored as written (create reads it back); with a late purpose, its lines tell.
    if (!format || (input.purpose === 'batch' && this.supportsBatches('client'))) return this.run('uploadFile', (ops, conn) => ops.uploadFile?.(conn, input));
    // Made on the first training line when batch files may come (a missing base model is then that line's error, answered as it is).
    let unusable: unknown;
    const make = () => {
      try {
        return format.converter(input.model);
      } catch (err) {
        unusable = err;
        throw err;
      }
    };
    const convert = this.supportsBatches('client') ? keepingBatchLines(make) : make();
    const converted: UploadInput = { ...input, bytes: undefined, open: () => convertJsonl(input.open(), convert) };
    try {
      return await this.run('uploadFile', (ops, conn) => ops.uploadFile?.(conn, converted));
    } catch (err) {
      throw unusable ?? conversionFailure(err) ?? err;
    }
  };
  /** A `batch` upload goes under the purpose the provider's batch service reads (Together's `batch-api`), known now or late. */
  private storedPurpose(purpose: UploadInput['purpose']): UploadInput['purpose'] {
    const stored = this.module.batch?.client?.inputPurpose;
    if (stored === undefined) return purpose;
    const map = (p: string) => (p === 'batch' ? stored : p);
    return typeof purpose === 'string' ? map(purpose) : purpose.then(map);
  }
  listFiles = (page: FileListInput) => this.run('listFiles', (ops, conn) => ops.listFiles?.(conn, page));
  // Ids reach providers' paths: a dot segment is refused here, for every provider, before anything else.
  getFile = (id: string) => this.run('getFile', (ops, conn) => ops.getFile?.(conn, id), fileId(id));
  fileContent = (id: string): Promise<ProviderContent> => this.run('fileContent', (ops, conn) => ops.fileContent?.(conn, id), fileId(id));
  deleteFile = (id: string) => this.run('deleteFile', (ops, conn) => ops.deleteFile?.(conn, id), fileId(id));
  createJob = async (input: CreateJobInput) => {
    const options = this.jobOptions(input.options);
    return this.run('createJob', (ops, conn) => ops.createJob?.(conn, { ...input, options }));
  };
  getJob = (id: string) => this.run('getJob', (ops, conn) => ops.getJob?.(conn, id), jobId(id));
  listJobs = (page: PageInput) => this.run('listJobs', (ops, conn) => ops.listJobs?.(conn, page));
  cancelJob = (id: string) => this.run('cancelJob', (ops, conn) => ops.cancelJob?.(conn, id), jobId(id));
  listEvents = (id: string, page: PageInput) => this.run('listEvents', (ops, conn) => ops.listEvents?.(conn, id, page), jobId(id));
  listCheckpoints = (id: string, page: PageInput) => this.run('listCheckpoints', (ops, conn) => ops.listCheckpoints?.(conn, id, page), jobId(id));
  findJob = (gatewayJobId: string) => this.run('findJob', (ops, conn) => ops.findJob?.(conn, gatewayJobId));
  /** Refuses what the provider does not carry (400 naming the field and the provider) before connecting. */
  chat = async (request: ChatRequest) => {
    if (this.supports('chat')) checkChatSupport(request.body, extraFields(request.body), this.module.chatSupport ?? NO_CHAT_FIELDS, this.module.title);
    return this.run('chat', (ops, conn) => ops.chat?.(conn, request), undefined, request.model);
  };

  listModels = () => this.run('listModels', (ops, conn) => ops.listModels?.(conn));

  /** Whether the provider has a batch service (batch.ts), `find` among its steps, or its client-mode part. */
  supportsBatches(step: 'create' | 'find' | 'client' = 'create'): boolean {
    const batch = this.module.batch;
    if (step === 'client') return batch?.client !== undefined;
    return step === 'create' ? batch !== undefined : typeof batch?.find === 'function';
  }

  /** The client-mode part of the batch service (its traits: native input, purpose, limits), or 400 `unsupported_operation`. */
  clientBatches(): ClientBatchSupport<unknown> {
    const client = this.module.batch?.client;
    if (!client) throw unsupported(`${this.module.title} has no client-mode batches in this gateway`);
    return client;
  }

  /**
   * The provider handle a caller's id wraps (batch-ids.ts), refused with 400 `invalid_id` naming
   * `param` unless it is exactly one of `kinds`, of this provider, and one these settings allow.
   * No connection is made.
   */
  batchHandle(id: string, kinds: readonly BatchIdKind[], param: string): { kind: BatchIdKind; handle: string } {
    const opened = openBatchId(id, kinds, param);
    const refuse = (why: string) => new GatewayError('invalid_request', `'${id.slice(0, 80)}' ${why}`, { path: param, code: 'invalid_id' });
    if (opened.provider !== this.module.name) throw refuse(`belongs to another provider than ${this.module.title}`);
    const handleKind: BatchHandleKind = opened.kind === 'input' ? 'input' : 'batch';
    const conn = this.module.connect(readSettings(this.module.settings, this.origin, null), this.env);
    if (!this.clientBatches().ownsHandle(conn, handleKind, opened.handle)) throw refuse(`names nothing ${this.module.title} may reach with these settings`);
    return { kind: opened.kind, handle: opened.handle };
  }

  /** Null when the provider's batch service runs `query.model`, else why not (no provider call). */
  batchRefusal(query: BatchModelQuery): string | null {
    const batch = this.module.batch;
    if (!batch) return `${this.module.title} has no batch service in this gateway`;
    return batch.accepts(this.module.connect(readSettings(this.module.settings, this.origin, null), this.env), query);
  }

  uploadBatch = (input: BatchUploadInput) => this.runBatch('batchUpload', (b, conn) => b.upload(conn, input), undefined, input.model);
  createBatch = (input: BatchCreateInput) => this.runBatch('batchCreate', (b, conn) => b.create(conn, input), undefined, input.model);
  findBatch = (gatewayBatchId: string) => this.runBatch('batchFind', (b, conn) => b.find?.(conn, gatewayBatchId));
  getBatch = (id: string) => this.runBatch('batchGet', (b, conn) => b.get(conn, id), jobId(id));
  cancelBatch = (id: string) => this.runBatch('batchCancel', (b, conn) => b.cancel(conn, id), jobId(id));
  /**
   * The provider's reference of a caller's batch input file: an id of ours opened (as `batchHandle`),
   * or, where uploads answer the provider's own file ids (OpenAI, Azure, Together), that id, checked
   * the same way (`ownsHandle`). No connection is made.
   */
  batchInputHandle(id: string, param: string): string {
    if (batchIdKind(id) !== null) return this.batchHandle(id, ['input'], param).handle;
    checkProviderId(id, param);
    const conn = this.module.connect(readSettings(this.module.settings, this.origin, null), this.env);
    if (!this.clientBatches().ownsHandle(conn, 'input', id))
      throw new GatewayError('invalid_request', `'${id.slice(0, 80)}' is not a batch input file id of ${this.module.title}`, {
        path: param,
        code: 'invalid_id',
      });
    return id;
  }

  /** The id a caller sees for an input file the provider names `reference` (wrapped where its ids are storage handles). */
  batchInputId(reference: string): string {
    return this.module.batch?.client?.opaqueInputIds ? batchId('input', this.module.name, reference) : reference;
  }

  listBatches = (page: PageInput) => this.runBatch('batchList', (b, conn) => b.client?.list(conn, page));
  /** The jobs with their views completed where the provider needs another call for that (`client.describe`), else as they are. */
  describeBatches = async (jobs: ProviderBatchJob[]) =>
    this.module.batch?.client?.describe && jobs.length ? this.runBatch('batchDescribe', (b, conn) => b.client?.describe?.(conn, jobs)) : jobs;
  /** The caller's uploaded batch input, streamed back (client mode reads it at create time). */
  readBatchInput = (fileId: string) => this.runBatch('batchInput', (b, conn) => b.client?.readInput(conn, fileId), { param: 'fileId', value: fileId });
  /** The job's result lines, read as they are iterated (the provider calls are not observed one by one). */
  batchOutput(job: ProviderBatchJob): AsyncIterable<BatchResultLine> {
    const batch = this.module.batch;
    if (!batch) throw unsupported(`${this.module.title} has no batch service`);
    return batch.output(this.module.connect(readSettings(this.module.settings, this.origin, 'batchOutput'), this.env), job);
  }

  private available(op: OperationName): boolean {
    if (op === 'batchFind') return this.supportsBatches('find');
    if (op === 'batchList' || op === 'batchInput' || op === 'batchDescribe') return this.supportsBatches('client');
    return op.startsWith('batch') ? this.supportsBatches() : this.supports(op as ProviderOperationName);
  }

  private runBatch<T>(op: OperationName, call: (batch: ProviderBatchSupport<unknown>, conn: unknown) => Promise<T> | undefined, id?: NamedId, model?: string) {
    const batch = this.module.batch;
    return this.run(op, (_ops, conn) => (batch ? call(batch, conn) : undefined), id, model);
  }

  /** `id`: the provider id the call names, checked before anything else; `model`: the model a call asks for (traces). */
  private run<T>(
    op: OperationName,
    call: (ops: ProviderOperations<unknown>, conn: unknown) => Promise<T> | undefined,
    id?: NamedId,
    model?: string,
  ): Promise<T> {
    if (!this.tracer) return this.call(op, call, id);
    return this.tracer.trace(this.module.name, op, model, () => this.call(op, call, id));
  }

  private async call<T>(op: OperationName, call: (ops: ProviderOperations<unknown>, conn: unknown) => Promise<T> | undefined, id?: NamedId): Promise<T> {
    if (id) checkProviderId(id.value, id.param);
    if (!this.available(op)) throw unsupported(`${this.module.title} does not support ${op}`);
    const conn = this.module.connect(readSettings(this.module.settings, this.origin, op), this.env);
    const result = call(this.module.operations, conn);
    if (!result) throw unsupported(`${this.module.title} does not support ${op}`);
    try {
      const value = await result;
      this.observe(this.module.name, op, null);
      return value;
    } catch (err) {
      this.observe(this.module.name, op, err instanceof GatewayError ? err.status : 500);
      throw err;
    }
  }
}
