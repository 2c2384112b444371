import { z } from 'zod';
import { intInRange } from '../../validation/parse';

/** Reference rule: letters, digits, `_` and `-`; not `latest`, `default` or all digits. */
const labelName = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9_-]+$/, 'may contain only letters, digits, "_" and "-"')
  .refine((n) => !['latest', 'default'].includes(n.toLowerCase()), { message: 'must not be "latest" or "default"' })
  .refine((n) => !/^\d+$/.test(n), { message: 'must not be all digits' });

const description = z.string().max(2000);
const colorCode = z.string().regex(/^#[0-9A-Fa-f]{6}$/, 'must be a colour like #1A2B3C');

export const createLabelSchema = z.object({ name: labelName, description: description.optional(), colorCode: colorCode.optional() }).strict();

export const updateLabelSchema = z.object({ name: labelName.optional(), description: description.optional(), colorCode: colorCode.optional() }).strict();

export const listLabelsSchema = z
  .object({
    search: z.string().max(100).optional(),
    currentPage: intInRange(0, 1_000_000).default(0),
    pageSize: intInRange(1, 100).default(50),
  })
  .strict();

export type CreateLabelInput = z.input<typeof createLabelSchema>;
export type UpdateLabelInput = z.input<typeof updateLabelSchema>;
export type ListLabelsInput = z.input<typeof listLabelsSchema>;
