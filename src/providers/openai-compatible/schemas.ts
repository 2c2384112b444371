/**
 * What the gateway reads of OpenAI's (and Azure OpenAI's) answers, as zod schemas: the answers are
 * checked against them (../answer.ts), so a field a provider dropped or retyped is a 502 naming it.
 * Fields a provider may omit (older API versions, preview features, Azure) are optional here and
 * fall back to null in the mappers; fields the gateway does not read are left out (and dropped).
 */
import { z } from 'zod';

export const openAIFileSchema = z.object({
  id: z.string(),
  /** Azure answers none (or 0) while it processes the file. */
  bytes: z.number().nullish(),
  created_at: z.number(),
  filename: z.string(),
  purpose: z.string(),
  status: z.string().nullish(),
  status_details: z.string().nullish(),
});
export type OpenAIFile = z.output<typeof openAIFileSchema>;

/**
 * One of two types, checked by hand: zod's union builds an issue (with its error map) for every
 * option that fails, on the happy path too, and answers are read on every provider call. A value of
 * neither type fails as the union did (an unexpected field).
 */
const either = <A, B>(a: (v: unknown) => v is A, b: (v: unknown) => v is B) => z.custom<A | B>((value) => a(value) || b(value));
const isNumber = (value: unknown): value is number => typeof value === 'number';

/** A hyperparameter as answered: a number, or "auto" (Azure answers -1 for a value nobody chose). */
const hyperparameter = either(isNumber, (value): value is 'auto' => value === 'auto').nullish();

const hyperparametersSchema = z.object({
  n_epochs: hyperparameter,
  batch_size: hyperparameter,
  learning_rate_multiplier: hyperparameter,
  beta: hyperparameter,
});
export type WireHyperparameters = z.output<typeof hyperparametersSchema>;

const methodSchema = z.object({
  type: z.string(),
  supervised: z.object({ hyperparameters: hyperparametersSchema.nullish() }).nullish(),
  dpo: z.object({ hyperparameters: hyperparametersSchema.nullish() }).nullish(),
});

export const openAIJobSchema = z.object({
  id: z.string(),
  /** OpenAI's statuses, or Azure's (`created`, `pending`). */
  status: z.string(),
  model: z.string(),
  fine_tuned_model: z.string().nullish(),
  trained_tokens: z.number().nullish(),
  error: z.object({ code: z.string().nullish(), message: z.string().nullish(), param: z.string().nullish() }).nullish(),
  created_at: z.number(),
  finished_at: z.number().nullish(),
  estimated_finish: z.number().nullish(),
  hyperparameters: hyperparametersSchema.nullish(),
  result_files: z.array(z.string()).nullish(),
  training_file: z.string(),
  validation_file: z.string().nullish(),
  seed: z.number().nullish(),
  method: methodSchema.nullish(),
  suffix: z.string().nullish(),
  metadata: z.record(z.string()).nullish(),
  organization_id: z.string().nullish(),
  /** Azure's spelling. */
  organisation_id: z.string().nullish(),
});
export type OpenAIJob = z.output<typeof openAIJobSchema>;

export const openAIEventSchema = z.object({
  id: z.string(),
  created_at: z.number(),
  level: z.string(),
  message: z.string(),
  type: z.string().nullish(),
  data: z.unknown(),
});
export type OpenAIEvent = z.output<typeof openAIEventSchema>;

export const openAICheckpointSchema = z.object({
  id: z.string(),
  created_at: z.number(),
  fine_tuned_model_checkpoint: z.string(),
  step_number: z.number(),
  metrics: z.record(z.number()).nullish(),
  fine_tuning_job_id: z.string(),
});
export type OpenAICheckpoint = z.output<typeof openAICheckpointSchema>;

/** A list of `item`s; Azure's file list (2024-10-21) has no `has_more`: it is not paged. */
const listOf = <T extends z.ZodTypeAny>(item: T) => z.object({ data: z.array(item), has_more: z.boolean().nullish() });
export type OpenAIList<T> = { data: T[]; has_more?: boolean | null };

export const openAIFileListSchema = listOf(openAIFileSchema);
export const openAIJobListSchema = listOf(openAIJobSchema);
export const openAIEventListSchema = listOf(openAIEventSchema);
export const openAICheckpointListSchema = listOf(openAICheckpointSchema);

/** A batch's time: Unix seconds; Azure's how-to shows ISO strings too (both are read). */
const batchTime = either(isNumber, (value): value is string => typeof value === 'string').nullish();

/** A batch of OpenAI's Batch API (Azure writes its statuses capitalised in some answers). */
export const openAIBatchSchema = z.object({
  id: z.string(),
  status: z.string(),
  input_file_id: z.string().nullish(),
  model: z.string().nullish(),
  created_at: batchTime,
  in_progress_at: batchTime,
  expires_at: batchTime,
  finalizing_at: batchTime,
  completed_at: batchTime,
  failed_at: batchTime,
  expired_at: batchTime,
  cancelling_at: batchTime,
  cancelled_at: batchTime,
  usage: z.object({ input_tokens: z.number().nullish(), output_tokens: z.number().nullish() }).nullish(),
  output_file_id: z.string().nullish(),
  error_file_id: z.string().nullish(),
  errors: z.object({ data: z.array(z.object({ code: z.string().nullish(), message: z.string().nullish() })).nullish() }).nullish(),
  request_counts: z.object({ total: z.number().nullish(), completed: z.number().nullish(), failed: z.number().nullish() }).nullish(),
  metadata: z.record(z.string()).nullish(),
});
export type OpenAIBatch = z.output<typeof openAIBatchSchema>;
export const openAIBatchListSchema = listOf(openAIBatchSchema);

/** A line of a batch's output or error file, OpenAI's `BatchRequestOutput`: a response, or an error. */
export const openAIBatchResultSchema = z.object({
  id: z.string().nullish(),
  custom_id: z.string(),
  response: z.object({ status_code: z.number(), request_id: z.string().nullish(), body: z.unknown() }).nullish(),
  error: z.object({ code: z.string().nullish(), message: z.string().nullish() }).nullish(),
});
