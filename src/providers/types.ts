/**
 * The provider adapter contract's operations and the one internal model they speak (camelCase, times
 * in Unix seconds): each provider translates its wire format into these types. Client mode, provider
 * mode and the job monitor all call these operations; none of them sees a provider's wire format.
 * What a provider module declares besides (settings, endpoints, job options) is in module.ts.
 */
import type { Readable } from 'node:stream';
import type { ProviderName } from './names';
import type { ChatBody } from './chat-request';

export type { ProviderName };

export const JOB_STATUSES = ['validating_files', 'queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;
/** OpenAI's job statuses; providers' own map onto them (intermediate "stopping" states stay `running`). */
export type JobStatus = (typeof JOB_STATUSES)[number];

export const METHOD_TYPES = ['supervised', 'dpo'] as const;
export type MethodType = (typeof METHOD_TYPES)[number];

/** A hyperparameter: a value, or "auto" (the provider chooses). */
export type HyperparameterValue = number | 'auto';

export type Hyperparameters = {
  nEpochs?: HyperparameterValue;
  batchSize?: HyperparameterValue;
  learningRateMultiplier?: HyperparameterValue;
  /** DPO only. */
  beta?: HyperparameterValue;
};

/** The training method and its hyperparameters (OpenAI's `method.<type>.hyperparameters`, flattened). */
export type JobMethod = {
  type: MethodType;
  hyperparameters: Hyperparameters;
};

export type JobError = {
  code: string;
  message: string;
  param: string | null;
};

export type EventLevel = 'info' | 'warn' | 'error';

/**
 * OpenAI's file statuses: `uploaded` (not processed yet), `processed` (usable), `error`. Providers' own
 * (Azure's `pending`, `running`, `deleting`…, Together's and Fireworks' processing states) map onto them.
 */
export type FileStatus = 'uploaded' | 'processed' | 'error';

export interface ProviderFile {
  /** The provider's reference: a file id, an `s3://`/`gs://` URI, a resource name. */
  id: string;
  bytes: number;
  createdAt: number;
  filename: string;
  purpose: string;
  status: FileStatus;
  /** The provider's own word for `status` where it says more (Azure's `deleted`): internal, for messages only. */
  providerStatus?: string;
  statusDetails: string | null;
}

export interface ProviderJob {
  id: string;
  status: JobStatus;
  model: string;
  fineTunedModel: string | null;
  /**
   * What chat completions call to use the result, when that is not `fineTunedModel` itself (Vertex AI:
   * the tuned model's endpoint). Null otherwise.
   */
  servingModel: string | null;
  trainedTokens: number | null;
  error: JobError | null;
  createdAt: number;
  finishedAt: number | null;
  estimatedFinish: number | null;
  /** What the provider reports it uses; values it has not settled yet are "auto" or absent. */
  hyperparameters: Hyperparameters;
  method: JobMethod | null;
  resultFiles: string[];
  trainingFile: string;
  validationFile: string | null;
  /** The seed the provider reports; null where it takes none or reports none. */
  seed: number | null;
  suffix: string | null;
  metadata: Record<string, string> | null;
  /** The provider's account, project or organisation the job belongs to, where it has one. */
  organizationId: string | null;
}

export interface ProviderEvent {
  /** Stable across calls (synthesised events too): the monitor stores each event once. */
  id: string;
  createdAt: number;
  level: EventLevel;
  message: string;
  type: 'message' | 'metrics' | null;
  data: unknown;
}

export interface ProviderCheckpoint {
  id: string;
  createdAt: number;
  fineTunedModelCheckpoint: string;
  stepNumber: number;
  metrics: Record<string, number>;
  fineTuningJobId: string;
}

export interface ProviderPage<T> {
  /** Newest first for jobs, events and checkpoints (as OpenAI lists them). */
  data: T[];
  hasMore: boolean;
  /** What to send as `after` for the next page: the last item's id, or the provider's page token. */
  nextAfter: string | null;
}

export interface PageInput {
  /** Cursor: `nextAfter` of the previous page. */
  after?: string;
  limit?: number;
}

export interface FileListInput extends PageInput {
  purpose?: string;
  order?: 'asc' | 'desc';
}

/** Provider-specific job options (REST `provider_options`, besides `model`), as the provider declares them (module.ts `jobOptions`). */
export type JobOptionValues = Readonly<Record<string, unknown>>;

/** File ids here are the provider's own references (already uploaded). */
export interface CreateJobInput {
  model: string;
  trainingFile: string;
  validationFile?: string;
  suffix?: string;
  seed?: number;
  method?: JobMethod;
  /** Send the hyperparameters in the deprecated top-level form (the caller used it). */
  legacyHyperparameters?: boolean;
  metadata?: Record<string, string>;
  options: JobOptionValues;
  /**
   * Provider mode: the gateway job id. Adapters use it to make creation idempotent or findable
   * (OpenAI metadata, Bedrock `clientRequestToken`, deterministic job ids), see `findJob`.
   */
  gatewayJobId?: string;
}

export interface UploadInput {
  filename: string;
  /**
   * A pass-through upload may learn its purpose only after the file (the OpenAI SDK sends it last):
   * adapters that need it await it after they have sent the content.
   */
  purpose: string | Promise<string>;
  /** The exact size of what `open()` yields when known; unknown for a converted or passed-through stream. */
  bytes?: number;
  /** The content; adapters stream it and never hold the whole file in memory. Called once. */
  open: () => Readable;
  /** The base model the dataset is meant for (`x-gateway-provider-model`), for providers whose format depends on it. */
  model?: string;
}

export interface ChatRequest {
  /** The provider's model (or deployment) to answer with. */
  model: string;
  /**
   * The model is a hosted job's result, which the gateway knows needs a deployment at some providers:
   * without one it says what to provision rather than calling. In client mode the model is the
   * caller's to choose: it is passed on, and the provider's answer relayed.
   */
  hosted: boolean;
  /**
   * OpenAI's request, validated, with prompt partials expanded in text content; its `model` is the
   * caller's. Checked against the module's `chatSupport` before the call: a provider gets only what it
   * declared it carries.
   */
  body: ChatBody;
  /** Aborted when the caller goes away: the provider call ends with it. */
  signal: AbortSignal;
}

/** Token counts; the details are OpenAI's `prompt_tokens_details` / `completion_tokens_details`, where the provider reports them. */
export interface ChatUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  promptTokensDetails?: Readonly<Record<string, number>>;
  completionTokensDetails?: Readonly<Record<string, number>>;
}

export type FinishReason = 'stop' | 'length' | 'content_filter' | 'tool_calls';

export interface ChatToolCall {
  id: string;
  name: string;
  /** JSON text, as OpenAI sends it. */
  arguments: string;
}

export interface TopLogprob {
  token: string;
  logprob: number;
  bytes: number[] | null;
}

export interface TokenLogprob extends TopLogprob {
  topLogprobs: TopLogprob[];
}

export interface ChatLogprobs {
  content: TokenLogprob[] | null;
  refusal: TokenLogprob[] | null;
}

export interface ChatChoice {
  index: number;
  content: string | null;
  refusal: string | null;
  toolCalls: ChatToolCall[];
  finishReason: FinishReason | null;
  logprobs: ChatLogprobs | null;
}

export interface ChatCompletion {
  id: string;
  model: string;
  /** Unix seconds. */
  created: number;
  choices: ChatChoice[];
  usage: ChatUsage | null;
  serviceTier?: string;
  systemFingerprint?: string;
}

/** A piece of a streamed tool call: `id` and `name` on its first piece, the arguments' JSON text in pieces. */
export interface ToolCallDelta {
  /** The call's position among the choice's tool calls. */
  index: number;
  id?: string;
  name?: string;
  arguments?: string;
}

/**
 * A streamed answer's pieces, in order for each choice (`index`, 0 unless `n` > 1): deltas, then the
 * finish reason; the usage (when known) last.
 */
export type ChatChunk =
  | { type: 'delta'; index?: number; content?: string; refusal?: string; toolCalls?: ToolCallDelta[]; logprobs?: ChatLogprobs }
  | { type: 'finish'; index?: number; finishReason: FinishReason }
  | { type: 'usage'; usage: ChatUsage }
  /**
   * A relayed stream's events (OpenAI's wire format), ready for the caller: `data: …` and a blank line
   * each, with the caller's model; `finishReason` is the last one relayed so far (traces).
   */
  | { type: 'events'; text: string; finishReason?: FinishReason };

export type ChatAnswer =
  | { stream: false; completion: ChatCompletion }
  | {
      stream: true;
      id: string;
      model: string;
      created: number;
      chunks: AsyncIterable<ChatChunk>;
      /** The chunks are the provider's own events (`events`, then the usage): the caller gets no role chunk of the gateway's. */
      relayed?: boolean;
    };

export interface ProviderContent {
  stream: Readable;
  bytes: number | null;
  contentType: string | null;
}

/** The operations a provider may support; a missing one is `unsupported_operation` (400). */
/** A model a provider lists: its id as chat takes it, when it was made (Unix seconds, 0 when the provider does not say), and who owns it. */
export interface ProviderModel {
  id: string;
  created: number;
  ownedBy: string;
}

export interface ProviderOperations<C> {
  uploadFile?(conn: C, input: UploadInput): Promise<ProviderFile>;
  listFiles?(conn: C, page: FileListInput): Promise<ProviderPage<ProviderFile>>;
  getFile?(conn: C, id: string): Promise<ProviderFile>;
  fileContent?(conn: C, id: string): Promise<ProviderContent>;
  deleteFile?(conn: C, id: string): Promise<void>;
  createJob?(conn: C, input: CreateJobInput): Promise<ProviderJob>;
  getJob?(conn: C, id: string): Promise<ProviderJob>;
  listJobs?(conn: C, page: PageInput): Promise<ProviderPage<ProviderJob>>;
  cancelJob?(conn: C, id: string): Promise<ProviderJob>;
  listEvents?(conn: C, id: string, page: PageInput): Promise<ProviderPage<ProviderEvent>>;
  listCheckpoints?(conn: C, id: string, page: PageInput): Promise<ProviderPage<ProviderCheckpoint>>;
  /** Provider mode: the job an interrupted submission of `gatewayJobId` may have created. */
  findJob?(conn: C, gatewayJobId: string): Promise<ProviderJob | undefined>;
  /** Chat completions with a (fine-tuned) model; streamed answers yield chunks as the provider produces them. */
  chat?(conn: C, request: ChatRequest): Promise<ChatAnswer>;
  /** The models the credentials can call, from the provider's own list (one page at most: `GET /v1/models` lists them as `@slug/<id>`). */
  listModels?(conn: C): Promise<ProviderModel[]>;
}

/** An operation of the contract above. */
export type ProviderOperationName = keyof ProviderOperations<unknown>;
/** The operation names the batch steps (batch.ts) are reported under (metrics, traces, required settings). */
export type BatchOperationName =
  'batchUpload' | 'batchCreate' | 'batchFind' | 'batchGet' | 'batchCancel' | 'batchOutput' | 'batchList' | 'batchInput' | 'batchDescribe';
/** Every call a provider client makes: the operations above and the batch service's steps (batch.ts). */
export type OperationName = ProviderOperationName | BatchOperationName;

/** Every operation of the contract but `findJob` (provider mode's own), in the order of the README's support matrix. */
export const OPERATIONS: readonly ProviderOperationName[] = [
  'uploadFile',
  'listFiles',
  'getFile',
  'fileContent',
  'deleteFile',
  'createJob',
  'getJob',
  'listJobs',
  'cancelJob',
  'listEvents',
  'listCheckpoints',
  'chat',
  'listModels',
];
