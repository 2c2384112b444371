/**
 * What the gateway reads of Together AI's answers, as zod schemas the answers are checked against
 * (../answer.ts): a field Together dropped or retyped is a 502 naming it. Together times its files in
 * Unix seconds and its jobs in ISO strings; fields the gateway does not read are left out.
 */
import { z } from 'zod';

export const togetherFileSchema = z.object({
  id: z.string(),
  created_at: z.number(),
  filename: z.string(),
  bytes: z.number(),
  purpose: z.string(),
  /** Fine-tune files only: Together validates them after the upload. */
  processing_status: z.string().nullish(),
  validation_report: z.object({ error: z.string().nullish() }).nullish(),
});
export type TogetherFile = z.output<typeof togetherFileSchema>;

export const togetherEventSchema = z.object({
  created_at: z.string(),
  level: z.string().nullish(),
  message: z.string().nullish(),
  type: z.string().nullish(),
  step: z.number().nullish(),
  checkpoint_path: z.string().nullish(),
  model_path: z.string().nullish(),
});
export type TogetherEvent = z.output<typeof togetherEventSchema>;

export const togetherJobSchema = z.object({
  id: z.string(),
  status: z.string(),
  created_at: z.string(),
  updated_at: z.string().nullish(),
  model: z.string(),
  model_output_name: z.string().nullish(),
  suffix: z.string().nullish(),
  training_file: z.string(),
  validation_file: z.string().nullish(),
  n_epochs: z.number().nullish(),
  batch_size: z.union([z.number(), z.literal('max')]).nullish(),
  random_seed: z.number().nullish(),
  training_method: z.object({ method: z.string().nullish(), dpo_beta: z.number().nullish() }).nullish(),
  token_count: z.number().nullish(),
  /** Only on GET of one job. */
  events: z.array(togetherEventSchema).nullish(),
  progress: z.object({ estimate_available: z.boolean().nullish(), seconds_remaining: z.number().nullish() }).nullish(),
});
export type TogetherJob = z.output<typeof togetherJobSchema>;

export const togetherCheckpointSchema = z.object({
  step: z.number(),
  created_at: z.string(),
});

/** One record per logged step: `{"train/loss": 0.75, "train/global_step": 10, …}`. */
export const togetherMetricsSchema = z.object({ metrics: z.array(z.record(z.number())).nullish() });

/** Together's `{data: [...]}` lists (none of them paged by the API). */
const listOf = <T extends z.ZodTypeAny>(item: T) => z.object({ data: z.array(item).nullish() });

export const togetherFileListSchema = listOf(togetherFileSchema);
export const togetherJobListSchema = listOf(togetherJobSchema);
export const togetherEventListSchema = listOf(togetherEventSchema);
export const togetherCheckpointListSchema = listOf(togetherCheckpointSchema);

/** A batch job of Together's Batch API (statuses OpenAI's, upper-cased). */
export const togetherBatchSchema = z.object({
  id: z.string(),
  status: z.string(),
  input_file_id: z.string().nullish(),
  output_file_id: z.string().nullish(),
  error_file_id: z.string().nullish(),
  error: z.string().nullish(),
});
export type TogetherBatch = z.output<typeof togetherBatchSchema>;
/** `POST /batches` answers 201 `{job}`. */
export const togetherBatchCreatedSchema = z.object({ job: togetherBatchSchema });
/** `GET /batches` answers a bare array. */
export const togetherBatchListSchema = z.array(togetherBatchSchema);

/**
 * A line of a batch's output or error file: `{custom_id, response: {status_code, body}}`, or a failure
 * as `{custom_id, error: {message, code}}` (`code` the model service's status, or a word) or a bare string.
 */
export const togetherBatchResultSchema = z.object({
  id: z.string().nullish(),
  custom_id: z.string(),
  response: z.object({ status_code: z.number().nullish(), request_id: z.string().nullish(), body: z.unknown() }).nullish(),
  error: z.union([z.string(), z.object({ message: z.string().nullish(), code: z.union([z.number(), z.string()]).nullish() })]).nullish(),
});
