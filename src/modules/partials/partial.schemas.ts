import { z } from 'zod';
import { intInRange, uuid } from '../../validation/parse';

/** The longest partial text accepted, in characters (Unicode code points). */
export const MAX_PARTIAL_STRING = 100_000;

export const PARTIAL_STATUSES = ['active', 'archived'] as const;

const codePoints = (s: string) => (s.length <= MAX_PARTIAL_STRING ? s.length : Array.from(s).length);

const name = z.string().trim().min(1).max(255);

const text = z
  .string()
  .min(1)
  .refine((s) => codePoints(s) <= MAX_PARTIAL_STRING, { message: `must be at most ${MAX_PARTIAL_STRING} characters` });

const description = z.string().max(2000);

/** A string for typed callers (GraphQL takes the status as a String), checked against the values here. */
const status = z.string().pipe(z.enum(PARTIAL_STATUSES));

export const createPartialSchema = z
  .object({
    name,
    string: text,
    versionDescription: description.optional(),
    collectionId: uuid.optional(),
  })
  .strict();

/** `description` describes the version this update saves (or, without a text change, the latest one). */
export const updatePartialSchema = z
  .object({ name: name.optional(), string: text.optional(), description: description.optional(), status: status.optional() })
  .strict();

export const listPartialsSchema = z.object({ collectionId: uuid.optional(), status: status.optional() }).strict();

/** The version as `/versions` answers it (a string, "2") or as a number. */
export const makeDefaultSchema = z
  .object({
    version: intInRange(1, 2_147_483_647),
  })
  .strict();

export type CreatePartialInput = z.input<typeof createPartialSchema>;
export type UpdatePartialInput = z.input<typeof updatePartialSchema>;
export type ListPartialsInput = z.input<typeof listPartialsSchema>;
export type MakeDefaultInput = z.input<typeof makeDefaultSchema>;
