import { z } from 'zod';
import { workspaceRef } from '../../validation/parse';

export const createApiKeySchema = z
  .object({
    name: z.string().trim().min(1).max(100),
    workspaceId: workspaceRef.optional(),
  })
  .strict();

export type CreateApiKeyInput = z.input<typeof createApiKeySchema>;
