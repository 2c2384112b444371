import { z } from 'zod';
import { uuid, workspaceRef } from '../../validation/parse';

/** The longest partial text accepted, in characters (Unicode code points). */
export const MAX_PARTIAL_STRING = 100_000;

export const PARTIAL_STATUSES = ['active', 'archived'] as const;
export type PartialStatus = (typeof PARTIAL_STATUSES)[number];

const codePoints = (s: string) => (s.length <= MAX_PARTIAL_STRING ? s.length : Array.from(s).length);

const name = z
  .string({ invalid_type_error: 'name must be a string' })
  .trim()
  .min(1, 'name must not be empty')
  .max(255, 'name must be at most 255 characters');

const text = z
  .string({ invalid_type_error: 'string must be a string' })
  .min(1, 'string must not be empty')
  .refine((s) => codePoints(s) <= MAX_PARTIAL_STRING, { message: `string must be at most ${MAX_PARTIAL_STRING} characters` });

const description = (field: string) =>
  z.string({ invalid_type_error: `${field} must be a string` }).max(2000, `${field} must be at most 2000 characters`);

const status = z.enum(PARTIAL_STATUSES, { errorMap: () => ({ message: `status must be one of: ${PARTIAL_STATUSES.join(', ')}` }) });

export const createPartialSchema = z
  .object({
    name,
    string: text,
    versionDescription: description('version_description').optional(),
    collectionId: uuid('collection_id').optional(),
    workspaceId: workspaceRef.optional(),
  })
  .strict();

/** `description` describes the version this update saves (or, without a text change, the latest one). */
export const updatePartialSchema = z
  .object({ name: name.optional(), string: text.optional(), description: description('description').optional(), status: status.optional() })
  .strict();

export const listPartialsSchema = z.object({ collectionId: uuid('collection_id').optional(), status: status.optional() }).strict();

export const makeDefaultSchema = z
  .object({
    version: z
      .number({ required_error: 'version is required', invalid_type_error: 'version must be an integer' })
      .int('version must be an integer')
      .min(1, 'version must be at least 1')
      .max(2_147_483_647, 'version is too large'),
  })
  .strict();

export type CreatePartialInput = z.input<typeof createPartialSchema>;
export type UpdatePartialInput = z.input<typeof updatePartialSchema>;
export type ListPartialsInput = z.input<typeof listPartialsSchema>;
export type MakeDefaultInput = z.input<typeof makeDefaultSchema>;
