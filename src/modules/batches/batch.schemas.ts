import { z } from 'zod';
import { intInRange } from '../../validation/parse';
import { gatewayOptionsSchema, metadataSchema } from '../fine-tuning/fine-tuning.schemas';

/**
 * Batch inputs, camelCase (REST bodies arrive converted). OpenAI's `CreateBatchRequest` plus
 * `gateway_options`, which route the lines like a hosted chat request and choose the runner.
 */

/** The one endpoint a batch may run here (OpenAI's other batch endpoints have no gateway route). */
export const BATCH_ENDPOINT = '/v1/chat/completions';
export const COMPLETION_WINDOW = '24h';
export const COMPLETION_WINDOW_MS = 24 * 60 * 60 * 1000;

/** OpenAI's limits on one input file. */
export const MAX_BATCH_REQUESTS = 50_000;
export const MAX_BATCH_BYTES = 200 * 1024 * 1024;

/** `gateway_options` keys the batch reads itself; the others are provider settings sent with every line. */
export const PROVIDER_OPTION = 'x-gateway-provider';
export const RUNNER_OPTION = 'x-gateway-batch-runner';
export const RUNNERS = ['gateway', 'provider'] as const;
export type BatchRunnerName = (typeof RUNNERS)[number];

export const createBatchSchema = z
  .object({
    inputFileId: z.string().min(1).max(200),
    endpoint: z
      .string({ required_error: 'is required' })
      .refine((e) => e === BATCH_ENDPOINT, { message: `must be "${BATCH_ENDPOINT}" (the only batch endpoint the gateway runs)` }),
    completionWindow: z.string({ required_error: 'is required' }).refine((w) => w === COMPLETION_WINDOW, { message: `must be "${COMPLETION_WINDOW}"` }),
    metadata: metadataSchema.nullish().transform((m) => m ?? undefined),
    gatewayOptions: gatewayOptionsSchema.optional(),
  })
  .strict();

export const listBatchesSchema = z.object({ after: z.string().min(1).max(200).optional(), limit: intInRange(1, 100).default(20) }).strict();

/** Client mode: ids wrap the provider's handles (a Vertex resource name, a Bedrock ARN), so they run longer. */
const MAX_CLIENT_ID_LENGTH = 1024;
export const clientCreateBatchSchema = createBatchSchema.extend({ inputFileId: z.string().min(1).max(MAX_CLIENT_ID_LENGTH) });
export const clientListBatchesSchema = listBatchesSchema.extend({ after: z.string().min(1).max(MAX_CLIENT_ID_LENGTH).optional() });

export type CreateBatchInput = z.input<typeof createBatchSchema>;
export type ListBatchesInput = z.input<typeof listBatchesSchema>;
export type ClientCreateBatchInput = z.input<typeof clientCreateBatchSchema>;
export type ClientListBatchesInput = z.input<typeof clientListBatchesSchema>;
