/**
 * What other modules need of stored integrations (IntegrationService implements it): an integration
 * named by `@slug`, and the one way to a hosted job's provider — used by the job monitor, the hosted
 * fine-tuning API and chat with a fine-tuned model alike.
 */
import type { Scope } from '../../auth/scope';
import type { FieldPath } from '../../errors';
import type { RequestHeaders } from '../../http/provider-headers';
import type { ProviderName } from '../../providers/names';
import type { ProviderClient } from '../../providers/registry';

/** What a provider call needs of a stored integration. */
export interface ResolvedIntegration {
  provider: ProviderName;
  slug: string;
  /** Decrypted, under the settings' canonical keys (`api_key`). Never log, return or persist these. */
  credentials: Record<string, string>;
  /** Non-secret settings under their header names. */
  options: Record<string, string>;
}

/** A hosted job, as far as reaching its provider goes. */
export interface HostedJobRef {
  id: string;
  provider: ProviderName;
  integrationSlug: string;
  /** The job's own non-secret settings (its `gateway_options`), under their header names. */
  gatewayOptions: Readonly<Record<string, string>>;
}

/** An integration with its provider's client, for calls the gateway makes of its own accord (listing models). */
export interface IntegrationClient {
  slug: string;
  provider: string;
  /** Changes when the integration does (credentials rotated, options changed): what a cache keys on. */
  version: string;
  /** Opens the credentials; throws when they cannot be (another master key) or the provider is unknown. */
  client(): ProviderClient;
}

export interface IntegrationSource {
  /** The integration `ref` (`@slug`) names; errors are about the caller's field `path`. */
  resolve(scope: Scope, ref: string, path?: FieldPath | string | null): Promise<ResolvedIntegration>;
  /**
   * The provider a hosted job runs at, with its integration's credentials and the job's settings; a
   * request that uses the job's result (chat) may add its own non-secret `settings` on top. Errors
   * (integration gone or now for another provider, a setting refused) are about `path`.
   */
  hostedProvider(scope: Scope, job: HostedJobRef, path: FieldPath | string, settings?: RequestHeaders): Promise<ProviderClient>;
  /** `hostedProvider` with the job's integration already resolved (hosted chat keeps it in memory): no statement, no decryption. */
  hostedClient(job: HostedJobRef, integration: ResolvedIntegration, path: FieldPath | string, settings?: RequestHeaders): ProviderClient;
  /** Every integration of the workspace, by slug, each with its provider's client. */
  clients(scope: Scope): Promise<IntegrationClient[]>;
}
