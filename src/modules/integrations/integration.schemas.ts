import { z } from 'zod';
import { badRequest, type FieldPath } from '../../errors';
import { PROVIDER_NAMES } from '../../providers/names';

/** Slugs are referenced as `@slug`: lower-case letters, digits, `-` and `_`, starting with a letter or digit. */
const SLUG = /^[a-z0-9][a-z0-9_-]*$/;
export const MAX_SLUG_LENGTH = 64;

export const integrationSlug = z
  .string()
  .min(1)
  .max(MAX_SLUG_LENGTH)
  .regex(SLUG, 'may contain only lower-case letters, digits, "-" and "_", and must start with a letter or digit');

export const createIntegrationSchema = z
  .object({
    slug: integrationSlug,
    provider: z.string().pipe(z.enum(PROVIDER_NAMES)),
    name: z.string().trim().max(200).optional(),
    // Checked against the provider's settings (src/providers/settings.ts), whose messages never quote a value.
    credentials: z.unknown(),
    options: z.unknown().optional(),
  })
  .strict();

export type CreateIntegrationInput = z.input<typeof createIntegrationSchema>;

/** PUT and PATCH bodies: the create fields, all optional; `slug` and `provider` may only repeat the current ones. */
export const updateIntegrationSchema = createIntegrationSchema.partial().strict();

export type UpdateIntegrationInput = z.input<typeof updateIntegrationSchema>;

/** `@slug` (or a bare slug) as used in `x-gateway-provider` and `gateway_options`. */
export function parseIntegrationRef(ref: string, path: FieldPath | string | null = null): string {
  const slug = ref.trim().replace(/^@/, '');
  if (!integrationSlug.safeParse(slug).success) {
    // Not quoted: a misplaced secret (an API key where the reference belongs) must not be echoed.
    throw badRequest('Not a valid integration reference: expected "@" and a slug, like "@my-openai"', path, 'invalid_integration_ref');
  }
  return slug;
}
