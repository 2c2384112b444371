/**
 * The inputs of the usage reads, as OpenAI's Usage and Costs APIs take them (`start_time`, `end_time`,
 * `bucket_width`, `group_by`, filters, `limit`, `page`) and the request log's filters. Keys are
 * camelCase here (faces convert); list parameters arrive as arrays.
 */
import { z } from 'zod';
import { intInRange } from '../../validation/parse';

export const BUCKET_SECONDS = { '1m': 60, '1h': 3600, '1d': 86_400 } as const;
export type BucketWidth = keyof typeof BUCKET_SECONDS;

/** OpenAI's limits on buckets per page, by width: default and maximum. */
export const BUCKET_LIMITS: Record<BucketWidth, { default: number; max: number }> = {
  '1m': { default: 60, max: 1440 },
  '1h': { default: 24, max: 168 },
  '1d': { default: 7, max: 31 },
};

/** The groupings the ledger can answer (OpenAI's `project_id` is the workspace); `user_id` and `service_tier` have no counterpart here. */
export const USAGE_GROUPS = ['model', 'api_key_id', 'project_id', 'batch'] as const;
export type UsageGroup = (typeof USAGE_GROUPS)[number];
export const COST_GROUPS = ['project_id', 'api_key_id', 'line_item'] as const;
export type CostGroup = (typeof COST_GROUPS)[number];

const unixTime = intInRange(0, 2 ** 40);
const strings = z.array(z.string().min(1).max(1024)).max(100);
const bool = z.preprocess((v) => (v === 'true' ? true : v === 'false' ? false : v), z.boolean());

const timeRange = {
  startTime: unixTime,
  endTime: unixTime.optional(),
  page: z.string().max(64).optional(),
  projectIds: strings.optional(),
  apiKeyIds: strings.optional(),
};

export const usageQuerySchema = z
  .object({
    ...timeRange,
    bucketWidth: z.enum(['1m', '1h', '1d']).default('1d'),
    groupBy: z.array(z.enum(USAGE_GROUPS)).max(USAGE_GROUPS.length).default([]),
    models: strings.optional(),
    batch: bool.optional(),
    limit: intInRange(1, 1440).optional(),
  })
  .strict();
export type UsageQueryInput = z.input<typeof usageQuerySchema>;

export const costQuerySchema = z
  .object({
    ...timeRange,
    bucketWidth: z.literal('1d').default('1d'),
    groupBy: z.array(z.enum(COST_GROUPS)).max(COST_GROUPS.length).default([]),
    limit: intInRange(1, 180).optional(),
  })
  .strict();
export type CostQueryInput = z.input<typeof costQuerySchema>;

export const logQuerySchema = z
  .object({
    model: z.string().min(1).max(1024).optional(),
    /** A status code, or `success` (below 400) / `error` (400 and above). */
    status: z.union([z.enum(['success', 'error']), intInRange(100, 599)]).optional(),
    apiKeyId: z.string().uuid().optional(),
    startTime: unixTime.optional(),
    endTime: unixTime.optional(),
    after: z
      .string()
      .regex(/^\d{1,19}$/, 'must be the id of a log entry')
      .optional(),
    limit: intInRange(1, 100).default(20),
  })
  .strict();
export type LogQueryInput = z.input<typeof logQuerySchema>;
