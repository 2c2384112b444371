import { randomUUID } from 'node:crypto';
import type { Scope } from '../../auth/scope';
import { SecretBoxError, type Sealer } from '../../crypto/secret-box';
import { isUniqueViolation } from '../../db/prisma-errors';
import { badRequest, conflict, GatewayError, invalidField, notFound, type FieldPath } from '../../errors';
import type { Integration } from '../../generated/prisma/client';
import type { RequestHeaders } from '../../http/provider-headers';
import type { ProviderClient, ProviderRegistry } from '../../providers/registry';
import { normaliseStored } from '../../providers/settings';
import { isUuid, parseInput, type Input } from '../../validation/parse';
import type { WorkspaceChanges } from '../../db/workspace-changes';
import type { HostedJobRef, IntegrationClient, IntegrationSource, ResolvedIntegration } from './integration.port';
import { optionsOf, type IntegrationRepository } from './integration.repository';
import {
  createIntegrationSchema,
  integrationSlug,
  parseIntegrationRef,
  updateIntegrationSchema,
  type CreateIntegrationInput,
  type UpdateIntegrationInput,
} from './integration.schemas';

const stringMap = (value: unknown): Record<string, string> =>
  Object.fromEntries(Object.entries(value && typeof value === 'object' ? value : {}).filter((e): e is [string, string] => typeof e[1] === 'string'));

/** Sealed credentials are bound to their row: a value copied onto another row does not open. */
const associatedData = (id: string) => `integration:${id}`;

export class IntegrationService implements IntegrationSource {
  constructor(
    private readonly integrations: IntegrationRepository,
    private readonly secrets: Sealer,
    private readonly providers: ProviderRegistry,
    /** Rotations and deletions are answered once every replica has dropped what hosted chat cached of them. */
    private readonly changes: WorkspaceChanges,
  ) {}

  async create(scope: Scope, input: Input<CreateIntegrationInput>): Promise<Integration> {
    const { slug, provider, name, credentials, options } = parseInput(createIntegrationSchema, input);
    const stored = normaliseStored(this.providers.module(provider, 'provider').settings, { credentials, options });
    const id = randomUUID();
    const encryptedCredentials = this.secrets.seal(JSON.stringify(stored.credentials), associatedData(id));
    try {
      return await this.integrations.create(scope, { id, slug, provider, name: name || slug, encryptedCredentials, options: stored.options });
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict(`An integration with slug '${slug}' already exists in this workspace`, 'slug', 'integration_slug_taken');
      throw err;
    }
  }

  list(scope: Scope): Promise<Integration[]> {
    return this.integrations.list(scope);
  }

  /** The integrations of the scope among `ids` (unknown ids are left out), for DataLoaders. */
  findMany(scope: Scope, ids: readonly string[]): Promise<Integration[]> {
    const valid = ids.filter(isUuid);
    return valid.length ? this.integrations.findManyByIds(scope, valid) : Promise.resolve([]);
  }

  /** The integration `ref` names: its id, its slug, or `@slug`. */
  async get(scope: Scope, ref: string): Promise<Integration> {
    const slug = withoutAt(ref);
    let row: Integration | null = null;
    if (isUuid(ref)) row = await this.integrations.findById(scope, ref);
    else if (integrationSlug.safeParse(slug).success) row = await this.integrations.findBySlug(scope, slug);
    if (!row) throw notFound('Integration', ref);
    return row;
  }

  /**
   * Changes an integration's name, credentials (rotation) or options, checked as at creation. `replace`
   * (PUT) sets every field, defaults for the ones left out; `merge` (PATCH) keeps them. Slug and
   * provider stay: jobs refer to the integration by slug, and their provider's settings are fixed.
   * Jobs read the integration at each step, so they go on with the new credentials.
   */
  async update(scope: Scope, ref: string, input: Input<UpdateIntegrationInput>, mode: 'replace' | 'merge'): Promise<Integration> {
    const data = parseInput(updateIntegrationSchema, input);
    const row = await this.get(scope, ref);
    if (data.slug !== undefined && data.slug !== row.slug)
      throw invalidField('slug', 'cannot be changed (jobs refer to the integration by it); create another integration', 'immutable_field');
    if (data.provider !== undefined && data.provider !== row.provider)
      throw invalidField('provider', 'cannot be changed; create another integration', 'immutable_field');
    if (mode === 'replace' && data.credentials === undefined) throw invalidField('credentials', 'is required', 'missing_setting');
    const stored = normaliseStored(this.providers.module(row.provider).settings, {
      credentials: data.credentials ?? this.openCredentials(row),
      options: data.options ?? (mode === 'merge' ? optionsOf(row) : {}),
    });
    const encryptedCredentials = this.secrets.seal(JSON.stringify(stored.credentials), associatedData(row.id));
    const name = data.name || (mode === 'merge' ? row.name : row.slug);
    const updated = await this.changes.announce(
      scope.workspaceId,
      () => this.integrations.update(scope, row.id, { name, encryptedCredentials, options: stored.options }),
      (result) => result !== null,
    );
    if (!updated) throw notFound('Integration', ref);
    return updated;
  }

  /** Deletes the integration (`ref`: id, slug or `@slug`); returns the deleted row (its id answers the REST call). */
  async delete(scope: Scope, ref: string): Promise<Integration> {
    const found = await this.get(scope, ref);
    const row = await this.changes.announce(
      scope.workspaceId,
      () => this.integrations.delete(scope, found),
      (result) => result !== null,
    );
    if (!row) throw notFound('Integration', ref);
    return row;
  }

  /**
   * The provider, decrypted credentials and options of the integration `ref` names (`@slug` or a
   * bare slug): 400 when malformed, 404 when the workspace has none; both about the caller's
   * field `path` (`gatewayOptions.x-gateway-provider`, …).
   */
  async resolve(scope: Scope, ref: string, path: FieldPath | string | null = null): Promise<ResolvedIntegration> {
    const slug = parseIntegrationRef(ref, path);
    const row = await this.integrations.findBySlug(scope, slug);
    if (!row) throw new GatewayError('not_found', `Integration '@${slug}' not found`, { path, code: 'not_found' });
    return { provider: this.providers.module(row.provider).name, slug: row.slug, credentials: this.openCredentials(row), options: optionsOf(row) };
  }

  async hostedProvider(scope: Scope, job: HostedJobRef, path: FieldPath | string, settings?: RequestHeaders): Promise<ProviderClient> {
    return this.hostedClient(job, await this.resolve(scope, `@${job.integrationSlug}`, path), path, settings);
  }

  hostedClient(job: HostedJobRef, integration: ResolvedIntegration, path: FieldPath | string, settings?: RequestHeaders): ProviderClient {
    if (integration.provider !== job.provider) {
      const reason = `Integration @${job.integrationSlug} of fine-tuning job '${job.id}' is now for ${integration.provider}, not ${job.provider}`;
      throw badRequest(reason, path, 'integration_changed');
    }
    // Errors about a setting name where the caller can change it: the request's headers, or the job's gateway_options.
    const overrides = settings
      ? { field: 'headers' as const, values: { ...job.gatewayOptions, ...settings } }
      : { field: 'gatewayOptions' as const, values: job.gatewayOptions };
    return this.providers.client(job.provider, { kind: 'integration', ...integration, overrides });
  }

  async clients(scope: Scope): Promise<IntegrationClient[]> {
    return (await this.integrations.list(scope)).map((row) => ({
      slug: row.slug,
      provider: row.provider,
      version: `${row.id}:${row.updatedAt.getTime()}`,
      client: () =>
        this.providers.client(row.provider, { kind: 'integration', slug: row.slug, credentials: this.openCredentials(row), options: optionsOf(row) }),
    }));
  }

  private openCredentials(row: Integration): Record<string, string> {
    try {
      return stringMap(JSON.parse(this.secrets.open(row.encryptedCredentials, associatedData(row.id))));
    } catch (err) {
      const reason = err instanceof SecretBoxError ? err.message : 'unreadable';
      throw new GatewayError('internal', `The stored credentials of integration '@${row.slug}' cannot be decrypted with this server's master key (${reason})`, {
        code: 'integration_credentials_unreadable',
      });
    }
  }
}

const withoutAt = (slug: string) => (slug.startsWith('@') ? slug.slice(1) : slug);
