import { z } from 'zod';
import { intInRange } from '../../validation/parse';

/**
 * The purposes a gateway-hosted file may have: api.md §4 (`fine-tune`, `batch`) plus the other
 * values OpenAI's SDKs send on upload. `fine-tune` files are validated as datasets.
 */
export const FILE_PURPOSES = ['fine-tune', 'batch', 'assistants', 'vision', 'user_data', 'evals'] as const;
/** Purposes of files the gateway writes itself (a batch's output and error files): listed and read, never uploaded. */
const OUTPUT_PURPOSES = ['batch_output'] as const;
export type FilePurpose = (typeof FILE_PURPOSES)[number] | (typeof OUTPUT_PURPOSES)[number];

export const filePurpose = z.enum(FILE_PURPOSES, {
  errorMap: (issue) => ({
    message:
      issue.code === 'invalid_type' && issue.received === 'undefined'
        ? `is required (one of ${FILE_PURPOSES.join(', ')})`
        : `must be one of ${FILE_PURPOSES.join(', ')}`,
  }),
});

/** Any purpose a stored file may have. */
export const storedPurpose = z.enum([...FILE_PURPOSES, ...OUTPUT_PURPOSES], {
  errorMap: () => ({ message: `must be one of ${[...FILE_PURPOSES, ...OUTPUT_PURPOSES].join(', ')}` }),
});

export const MAX_FILENAME_LENGTH = 255;

export const DEFAULT_LIST_LIMIT = 10_000;
export const MAX_LIST_LIMIT = 10_000;

export const listFilesSchema = z
  .object({
    purpose: z.string().pipe(storedPurpose).optional(),
    limit: intInRange(1, MAX_LIST_LIMIT).default(DEFAULT_LIST_LIMIT),
    order: z.enum(['asc', 'desc']).default('desc'),
    after: z.string().min(1).optional(),
  })
  .strict();

export type ListFilesInput = z.input<typeof listFilesSchema>;
