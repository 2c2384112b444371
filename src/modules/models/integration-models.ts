/**
 * The models each integration of a workspace can call (issue 22 §4), addressed as `@slug/<id>` — the
 * form chat routes without headers. Each comes from its provider's own list call (`listModels`),
 * kept briefly per integration and replica so that `GET /v1/models` costs no provider call most of
 * the time. A provider that fails or is slow never fails the list: its integration is left out of
 * that answer and logged; a slow call goes on and fills the cache for the next one.
 */
import type { Scope } from '../../auth/scope';
import type { Logger } from '../../logger';
import type { ProviderModel } from '../../providers/types';
import type { IntegrationClient, IntegrationSource } from '../integrations/integration.port';

export interface IntegrationModel {
  /** `@slug/<provider model id>`. */
  id: string;
  /** Unix seconds; 0 when the provider does not say. */
  created: number;
  ownedBy: string;
  provider: string;
  /** The integration's slug, without `@`. */
  integration: string;
}

export interface IntegrationModelTimings {
  /** How long a provider's list is reused. */
  ttlMs: number;
  /** How long a failed list keeps its integration out before the provider is asked again. */
  failureTtlMs: number;
  /** How long an answer waits for a provider's list it does not have yet. */
  waitMs: number;
}

export const INTEGRATION_MODEL_TIMINGS: IntegrationModelTimings = { ttlMs: 60_000, failureTtlMs: 15_000, waitMs: 3_000 };

const LATE = Symbol('late');

interface Entry {
  expires: number;
  /** Null when the list failed (the integration is left out until the entry expires). */
  models: Promise<ProviderModel[] | null>;
}

export class IntegrationModels {
  /** By integration version (id and last update), so rotated credentials are asked afresh. */
  private readonly cache = new Map<string, Entry>();

  constructor(
    private readonly integrations: Pick<IntegrationSource, 'clients'>,
    private readonly logger: Logger,
    private readonly timings: IntegrationModelTimings = INTEGRATION_MODEL_TIMINGS,
  ) {}

  /** Every integration's models, integrations in their listing order; the ones without a list left out. */
  async list(scope: Scope): Promise<IntegrationModel[]> {
    const integrations = await this.integrations.clients(scope);
    this.prune();
    const lists = await Promise.all(integrations.map((integration) => this.modelsOf(integration)));
    return integrations.flatMap((integration, i) => (lists[i] ?? []).map((model) => integrationModel(integration, model)));
  }

  /** One model by its `@slug/<id>`, or undefined when that integration does not list it (now). */
  async find(scope: Scope, ref: string): Promise<IntegrationModel | undefined> {
    const slash = ref.indexOf('/');
    const slug = ref.slice(1, slash);
    const integration = (await this.integrations.clients(scope)).find((i) => i.slug === slug);
    if (!ref.startsWith('@') || slash < 0 || !integration) return undefined;
    const models = (await this.modelsOf(integration)) ?? [];
    const found = models.find((model) => model.id === ref.slice(slash + 1));
    return found && integrationModel(integration, found);
  }

  /** The cached list, or the provider's within the wait; null when it failed, is slow, or the provider has no list. */
  private async modelsOf(integration: IntegrationClient): Promise<ProviderModel[] | null> {
    let entry = this.cache.get(integration.version);
    if (!entry || entry.expires <= Date.now()) {
      const fresh: Entry = { expires: Date.now() + this.timings.ttlMs, models: this.fetch(integration) };
      // A failure is asked again sooner than a list is refreshed.
      void fresh.models.then((models) => models === null && (fresh.expires = Math.min(fresh.expires, Date.now() + this.timings.failureTtlMs)));
      this.cache.set(integration.version, (entry = fresh));
    }
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<typeof LATE>((resolve) => (timer = setTimeout(resolve, this.timings.waitMs, LATE)));
    const models = await Promise.race([entry.models, late]).finally(() => clearTimeout(timer));
    if (models !== LATE) return models;
    this.logger.warn({ integration: integration.slug, provider: integration.provider }, 'integration models left out: the provider is slow to list them');
    return null;
  }

  /** The provider's list (null when it has none); a failure is logged and answers null. */
  private async fetch(integration: IntegrationClient): Promise<ProviderModel[] | null> {
    try {
      const client = integration.client();
      return client.supports('listModels') ? await client.listModels() : null;
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      this.logger.warn(
        { integration: integration.slug, provider: integration.provider, reason },
        'integration models left out: the provider did not list them',
      );
      return null;
    }
  }

  private prune(): void {
    const now = Date.now();
    for (const [key, entry] of this.cache) if (entry.expires <= now) this.cache.delete(key);
  }
}

const integrationModel = (integration: IntegrationClient, model: ProviderModel): IntegrationModel => ({
  id: `@${integration.slug}/${model.id}`,
  created: model.created,
  ownedBy: model.ownedBy,
  provider: integration.provider,
  integration: integration.slug,
});
