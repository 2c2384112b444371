/**
 * The provider adapter contract. Adapters take plain inputs (no HTTP request objects, no database
 * rows) and return the gateway's internal model: camelCase fields, times in Unix seconds. The REST
 * and GraphQL faces and the job monitor only ever see these shapes, never a provider's wire format.
 */
import { unsupported } from '../errors';
import type { HttpPolicy } from './http';

export type ProviderName = 'openai' | 'azure-openai' | 'bedrock' | 'vertex-ai' | 'fireworks-ai' | 'together-ai';

export interface ProviderContext {
  /** Secrets, e.g. `{apiKey}`. Never logged or echoed in errors. */
  credentials: Record<string, string>;
  /** Non-secret settings, e.g. `{organization, project}`. */
  options: Record<string, string>;
  /** The provider's API root, e.g. `https://api.openai.com/v1`; fixed by server configuration. */
  baseUrl: string;
  /** Timeouts and retry tuning; defaults suit production, tests shrink them. */
  http?: HttpPolicy;
}

export interface ProviderFile {
  id: string;
  bytes: number;
  createdAt: number;
  filename: string;
  purpose: string;
  status: string;
}

export type JobStatus = 'validating_files' | 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';

export interface ProviderJob {
  id: string;
  status: JobStatus;
  model: string;
  fineTunedModel: string | null;
  trainedTokens: number | null;
  error: { code: string; message: string; param: string | null } | null;
  createdAt: number;
  finishedAt: number | null;
  estimatedFinish: number | null;
  /** Kept in the provider's (OpenAI) spelling, e.g. `n_epochs`: the REST face returns it unchanged. */
  hyperparameters: Record<string, unknown>;
  resultFiles: string[];
  trainingFile: string;
  validationFile: string | null;
  seed: number | null;
  /** OpenAI's `method` object, passed through as-is for the same reason as `hyperparameters`. */
  method: Record<string, unknown> | null;
  suffix: string | null;
  metadata: Record<string, string> | null;
}

export interface ProviderEvent {
  id: string;
  createdAt: number;
  level: 'info' | 'warn' | 'error';
  message: string;
  type: string | null;
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

export interface Page<T> {
  data: T[];
  hasMore: boolean;
}

export interface PageInput {
  /** Cursor: the id of the last item of the previous page. */
  after?: string;
  limit?: number;
}

/** File ids here are the provider's own (already uploaded). */
export interface CreateJobInput {
  model: string;
  trainingFile: string;
  validationFile?: string;
  suffix?: string;
  seed?: number;
  method?: Record<string, unknown>;
  hyperparameters?: Record<string, unknown>;
  metadata?: Record<string, string>;
}

export interface UploadInput {
  filename: string;
  purpose: string;
  /** The exact size of what `open()` yields; uploads send it as Content-Length. */
  bytes: number;
  /** Opens the content afresh; adapters stream it and never hold the whole file in memory. */
  open: () => NodeJS.ReadableStream;
}

export interface FineTuningProvider {
  readonly name: ProviderName;
  uploadFile?(ctx: ProviderContext, input: UploadInput): Promise<ProviderFile>;
  createJob?(ctx: ProviderContext, input: CreateJobInput): Promise<ProviderJob>;
  getJob?(ctx: ProviderContext, id: string): Promise<ProviderJob>;
  listJobs?(ctx: ProviderContext, page: PageInput): Promise<Page<ProviderJob>>;
  cancelJob?(ctx: ProviderContext, id: string): Promise<ProviderJob>;
  listEvents?(ctx: ProviderContext, id: string, page: PageInput): Promise<Page<ProviderEvent>>;
  listCheckpoints?(ctx: ProviderContext, id: string, page: PageInput): Promise<Page<ProviderCheckpoint>>;
}

export type ProviderOperation = Exclude<keyof FineTuningProvider, 'name'>;

/**
 * Returns the provider's operation bound to it, or throws the typed `unsupported` error (400) so the
 * caller learns to route around a provider that lacks it, instead of a TypeError surfacing as a 500.
 */
export function requireOperation<K extends ProviderOperation>(
  provider: FineTuningProvider,
  op: K,
): NonNullable<FineTuningProvider[K]> {
  const fn = provider[op];
  if (typeof fn !== 'function') throw unsupported(`Provider '${provider.name}' does not support ${op}`);
  return (fn as (...args: unknown[]) => unknown).bind(provider) as NonNullable<FineTuningProvider[K]>;
}
