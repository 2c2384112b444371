import { z } from 'zod';

const SLUG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

export const createWorkspaceSchema = z
  .object({
    name: z.string().trim().min(1).max(100),
    slug: z.string().min(1).max(64).regex(SLUG, 'must be lower-case letters and digits separated by single hyphens'),
  })
  .strict();

export type CreateWorkspaceInput = z.input<typeof createWorkspaceSchema>;
