import { z } from 'zod';
import { badRequest } from '../../errors';
import { camelToSnake } from '../../http/case';
import type { ProviderName } from '../../providers/types';
import { workspaceRef } from '../../validation/parse';

export const PROVIDER_NAMES = ['openai', 'azure-openai', 'bedrock', 'vertex-ai', 'fireworks-ai', 'together-ai'] as const satisfies readonly ProviderName[];

/** Slugs are referenced as `@slug`: lower-case letters, digits, `-` and `_`, starting with a letter or digit. */
const SLUG = /^[a-z0-9][a-z0-9_-]*$/;
export const MAX_SLUG_LENGTH = 64;

export const integrationSlug = z
  .string()
  .min(1, 'slug must not be empty')
  .max(MAX_SLUG_LENGTH, `slug must be at most ${MAX_SLUG_LENGTH} characters`)
  .regex(SLUG, 'slug may contain only lower-case letters, digits, "-" and "_", and must start with a letter or digit');

export const createIntegrationSchema = z
  .object({
    slug: integrationSlug,
    provider: z.enum(PROVIDER_NAMES, {
      errorMap: () => ({ message: `provider must be one of ${PROVIDER_NAMES.join(', ')}` }),
    }),
    name: z.string().trim().max(200, 'name must be at most 200 characters').optional(),
    // Checked per provider by normaliseSettings, whose messages never quote a value.
    credentials: z.unknown(),
    options: z.unknown().optional(),
    workspaceId: workspaceRef.optional(),
  })
  .strict();

export type CreateIntegrationInput = z.input<typeof createIntegrationSchema>;

/**
 * The settings each provider takes: the header names of api.md §6 without `x-gateway-` and the
 * provider's own prefix, in snake_case (`x-gateway-openai-organization` → `organization`).
 * Credentials are secret (stored encrypted, never returned); options are not.
 */
interface SettingsSpec {
  required: readonly string[];
  optional: readonly string[];
}

export interface ProviderSettingsSpec {
  credentials: SettingsSpec;
  options: SettingsSpec;
}

export const PROVIDER_SETTINGS: Record<ProviderName, ProviderSettingsSpec> = {
  openai: {
    credentials: { required: ['api_key'], optional: [] },
    options: { required: [], optional: ['organization', 'project'] },
  },
  'azure-openai': {
    credentials: { required: ['api_key'], optional: [] },
    options: { required: ['resource_name'], optional: ['api_version', 'deployment_name'] },
  },
  bedrock: {
    credentials: { required: ['access_key_id', 'secret_access_key'], optional: ['session_token'] },
    options: { required: ['region'], optional: ['s3_bucket', 's3_object_key', 'role_arn'] },
  },
  'vertex-ai': {
    credentials: { required: ['service_account_json'], optional: [] },
    options: { required: ['project_id', 'region'], optional: ['storage_bucket_name'] },
  },
  'fireworks-ai': {
    credentials: { required: ['api_key'], optional: [] },
    options: { required: ['account_id'], optional: [] },
  },
  'together-ai': {
    credentials: { required: ['api_key'], optional: [] },
    options: { required: [], optional: [] },
  },
};

/** A service account JSON is the largest value expected; anything far beyond it is a mistake. */
const MAX_SETTING_LENGTH = 64 * 1024;
const MAX_KEY_LENGTH = 64;

/**
 * A provider's credentials or options as a flat object of non-empty strings under the names in
 * PROVIDER_SETTINGS. Keys may be given in snake_case (REST) or camelCase (GraphQL); they are kept
 * in snake_case. Error messages name keys, never values: a value may be a secret.
 */
export function normaliseSettings(provider: ProviderName, which: keyof ProviderSettingsSpec, input: unknown): Record<string, string> {
  const spec = PROVIDER_SETTINGS[provider][which];
  const allowed = [...spec.required, ...spec.optional];
  // Absent is an empty object: the error then names the first required key.
  const given: unknown = input ?? {};
  if (typeof given !== 'object' || given === null || Array.isArray(given)) throw badRequest(`${which} must be an object of strings`, which);

  const out: Record<string, string> = {};
  for (const [rawKey, value] of Object.entries(given)) {
    const key = camelToSnake(rawKey);
    const shownKey = rawKey.length > MAX_KEY_LENGTH ? `${rawKey.slice(0, MAX_KEY_LENGTH)}…` : rawKey;
    if (!allowed.includes(key)) {
      const accepted = allowed.length ? `accepted: ${allowed.join(', ')}` : 'it takes none';
      throw badRequest(`Unknown ${which} field '${shownKey}' for provider '${provider}' (${accepted})`, `${which}.${shownKey}`);
    }
    if (Object.hasOwn(out, key)) throw badRequest(`${which}.${key} was given more than once`, `${which}.${key}`);
    if (typeof value !== 'string' || value.length === 0) throw badRequest(`${which}.${key} must be a non-empty string`, `${which}.${key}`);
    if (value.length > MAX_SETTING_LENGTH) throw badRequest(`${which}.${key} is too long (at most ${MAX_SETTING_LENGTH} characters)`, `${which}.${key}`);
    out[key] = value;
  }
  for (const key of spec.required) {
    if (!Object.hasOwn(out, key)) throw badRequest(`${which}.${key} is required for provider '${provider}' (${describe(spec)})`, `${which}.${key}`);
  }
  return out;
}

function describe(spec: SettingsSpec): string {
  const parts = [];
  if (spec.required.length) parts.push(`required: ${spec.required.join(', ')}`);
  if (spec.optional.length) parts.push(`optional: ${spec.optional.join(', ')}`);
  return parts.join('; ');
}

/** `@slug` (or a bare slug) as used in `x-gateway-provider` and `gateway_options`. */
export function parseIntegrationRef(ref: unknown): string {
  if (typeof ref !== 'string') throw badRequest('An integration reference must be a string like "@my-openai"', null, 'invalid_integration_ref');
  const slug = ref.trim().replace(/^@/, '');
  if (!integrationSlug.safeParse(slug).success) {
    // Not quoted: a misplaced secret (an API key where the reference belongs) must not be echoed.
    throw badRequest('Not a valid integration reference: expected "@" and a slug, like "@my-openai"', null, 'invalid_integration_ref');
  }
  return slug;
}
