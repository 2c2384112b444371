/**
 * A provider module: one folder under `src/providers/<name>/` exporting a {@link ProviderModule} —
 * the settings it takes (with the header and integration names and the patterns that guard them),
 * the base URLs it calls (from server configuration only), how it builds a connection from validated
 * settings, and its operations (types.ts). Kept apart from types.ts so that the settings and HTTP
 * helpers, which speak the operations' types, are not imported by them.
 */
import type { z } from 'zod';
import type { HttpPolicy } from './http';
import type { SettingValues, SettingsSpec } from './settings';
import type { SignedUrlHosts } from './signed-urls';
import type { ProviderFile, ProviderName, ProviderOperations } from './types';
import type { ChatSupport } from './chat-fields';
import type { ProviderBatchSupport } from './batch';

/** What a provider module gets from the server: base URLs (configuration only) and HTTP policy. */
export interface ProviderEnvironment {
  /** The module's endpoints, from `GATEWAY_*_BASE_URL` variables or their defaults (may hold `{placeholders}`). */
  baseUrls: Record<string, string>;
  /** The endpoints whose URL came from configuration rather than the default (e.g. S3 then goes path-style). */
  configured: ReadonlySet<string>;
  /** Where the module's signed URLs may point besides its base URLs: its `downloads` hosts and the operator's. */
  downloadHosts: readonly string[];
  http: HttpPolicy;
}

export interface EndpointSpec {
  /** The configuration variable that overrides it, e.g. `GATEWAY_AZURE_OPENAI_BASE_URL`. */
  env: string;
  /** May hold `{placeholders}` filled from validated settings, e.g. `https://{resource}.openai.azure.com/openai`. */
  default: string;
}

/** How hosted jobs behave at a provider, where it differs from OpenAI. */
export interface HostingPolicy {
  /** Whether an uploaded file may be used by a job yet (Azure processes files first). Default: ready. */
  fileState?(file: ProviderFile): 'ready' | 'pending' | 'failed';
}

/** `fileState` for providers that process uploads before a job may use them: by OpenAI's file status. */
export const fileStateOf = (file: ProviderFile): 'ready' | 'pending' | 'failed' =>
  file.status === 'processed' ? 'ready' : file.status === 'error' ? 'failed' : 'pending';

/**
 * A training format that differs from OpenAI's chat JSONL: uploads are converted line by line (see
 * dataset.ts). `model` is the base model the dataset is meant for (`x-gateway-provider-model`, or the
 * hosted job's model), for providers whose format depends on it; throw to refuse a line.
 */
export interface DatasetFormat {
  converter(model: string | undefined): (example: unknown, lineNumber: number) => unknown;
}

export interface ProviderModule<T extends SettingsSpec = SettingsSpec, C = unknown> {
  readonly name: ProviderName;
  /** Shown in messages: `Azure OpenAI`. */
  readonly title: string;
  /** The settings it takes: credentials and options, with header and integration names and patterns. */
  readonly settings: T;
  readonly endpoints: Readonly<Record<string, EndpointSpec>>;
  /** A provider that hands out signed storage URLs: the hosts they may point to (see signed-urls.ts). */
  readonly downloads?: SignedUrlHosts;
  /** Builds the per-call connection (clients, base URLs, auth) from validated settings. */
  connect(settings: SettingValues<T>, env: ProviderEnvironment): C;
  readonly operations: ProviderOperations<C>;
  readonly hosting?: HostingPolicy;
  readonly dataset?: DatasetFormat;
  /**
   * The fine-tuning job options it takes (REST `provider_options` besides `model`, camelCase here),
   * declared like its settings. Any other option is refused naming it and the provider; without a
   * schema the provider takes none. The adapter reads them with `readJobOptions` (job-input.ts).
   */
  readonly jobOptions?: JobOptionsSchema;
  /** What of OpenAI's chat request `chat` carries (see chat-fields.ts); required with a `chat` operation. */
  readonly chatSupport?: ChatSupport;
  /** The provider's own batch service (the `provider` batch runner): the steps batch.ts describes. */
  readonly batch?: ProviderBatchSupport<C>;
}

/** A provider's job options: a zod object of optional fields. */
export type JobOptionsSchema = z.ZodObject<Record<string, z.ZodOptional<z.ZodTypeAny>>>;
