import { randomUUID } from 'node:crypto';
import type { Scope } from '../../auth/scope';
import { SecretBoxError, type SecretBox } from '../../crypto/secret-box';
import { isUniqueViolation } from '../../db/prisma-errors';
import { conflict, GatewayError, notFound } from '../../errors';
import type { Integration } from '../../generated/prisma/client';
import { snakeToCamel } from '../../http/case';
import type { ProviderName } from '../../providers/types';
import { isUuid, parseInput, type Unvalidated } from '../../validation/parse';
import { optionsOf } from './integration.mapper';
import type { IntegrationRepository } from './integration.repository';
import {
  createIntegrationSchema,
  integrationSlug,
  normaliseSettings,
  parseIntegrationRef,
  type CreateIntegrationInput,
} from './integration.schemas';

/** What a fine-tuning job needs to call a provider with a stored integration. */
export interface ResolvedIntegration {
  provider: ProviderName;
  /**
   * Decrypted secrets with camelCase keys, ready for `ProviderContext.credentials`
   * (e.g. `{apiKey}`). Never log, return or persist these.
   */
  credentials: Record<string, string>;
  /** Non-secret settings with camelCase keys, ready for `ProviderContext.options` (e.g. `{organization}`). */
  options: Record<string, string>;
  slug: string;
}

/** Sealed credentials are bound to their row: a value copied onto another row does not open. */
const associatedData = (id: string) => `integration:${id}`;

export class IntegrationService {
  constructor(
    private readonly integrations: IntegrationRepository,
    private readonly secrets: SecretBox,
  ) {}

  async create(scope: Scope, input: Unvalidated<CreateIntegrationInput>): Promise<Integration> {
    const { workspaceId: _chosenByScope, slug, provider, name, ...settings } = parseInput(createIntegrationSchema, input);
    const credentials = normaliseSettings(provider, 'credentials', settings.credentials);
    const options = normaliseSettings(provider, 'options', settings.options);
    const id = randomUUID();
    const encryptedCredentials = this.secrets.seal(JSON.stringify(credentials), associatedData(id));
    try {
      return await this.integrations.create(scope, { id, slug, provider, name: name || slug, encryptedCredentials, options });
    } catch (err) {
      if (isUniqueViolation(err)) {
        throw conflict(`An integration with slug '${slug}' already exists in this workspace`, 'slug', 'integration_slug_taken');
      }
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

  /** `slug` may also be given as `@slug`. */
  async get(scope: Scope, slug: string): Promise<Integration> {
    slug = withoutAt(slug);
    const row = integrationSlug.safeParse(slug).success ? await this.integrations.findBySlug(scope, slug) : null;
    if (!row) throw notFound('Integration', slug);
    return row;
  }

  /** Deletes the integration; returns the deleted row (its id answers the REST call). */
  async delete(scope: Scope, slug: string): Promise<Integration> {
    slug = withoutAt(slug);
    const row = integrationSlug.safeParse(slug).success ? await this.integrations.deleteBySlug(scope, slug) : null;
    if (!row) throw notFound('Integration', slug);
    return row;
  }

  /**
   * The provider, decrypted credentials and options of the integration `ref` names: `@slug` or a
   * bare slug. 400 (`invalid_integration_ref`, no param: callers name their own field with
   * `withParam`) when malformed, 404 when the workspace has no such integration.
   */
  async resolve(scope: Scope, ref: string): Promise<ResolvedIntegration> {
    const slug = parseIntegrationRef(ref);
    const row = await this.integrations.findBySlug(scope, slug);
    if (!row) throw notFound('Integration', `@${slug}`);
    let stored: Record<string, string>;
    try {
      stored = JSON.parse(this.secrets.open(row.encryptedCredentials, associatedData(row.id))) as Record<string, string>;
    } catch (err) {
      const reason = err instanceof SecretBoxError ? err.message : 'unreadable';
      throw new GatewayError('internal', `The stored credentials of integration '@${slug}' cannot be decrypted with this server's master key (${reason})`, {
        code: 'integration_credentials_unreadable',
      });
    }
    return {
      provider: row.provider as ProviderName,
      credentials: camelKeys(stored),
      options: camelKeys(optionsOf(row)),
      slug: row.slug,
    };
  }
}

function camelKeys(settings: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(settings).map(([key, value]) => [snakeToCamel(key), value]));
}

const withoutAt = (slug: string) => (slug.startsWith('@') ? slug.slice(1) : slug);
