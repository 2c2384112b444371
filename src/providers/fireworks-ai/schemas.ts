/**
 * What the gateway reads of Fireworks AI's answers (proto3 JSON: RFC 3339 times, unset fields left
 * out), as zod schemas the answers are checked against (../answer.ts): a field Fireworks dropped or
 * retyped is a 502 naming it. Fields the gateway does not read are left out.
 */
import { z } from 'zod';

const statusSchema = z.object({ code: z.string().optional(), message: z.string().optional() });
export type FireworksStatus = z.output<typeof statusSchema>;

export const datasetSchema = z.object({
  name: z.string(),
  displayName: z.string().optional(),
  createTime: z.string().optional(),
  state: z.string().optional(),
  status: statusSchema.nullish(),
});
export type FireworksDataset = z.output<typeof datasetSchema>;

export const jobSchema = z.object({
  name: z.string(),
  displayName: z.string().optional(),
  createTime: z.string().optional(),
  updateTime: z.string().optional(),
  completedTime: z.string().nullish(),
  dataset: z.string(),
  evaluationDataset: z.string().optional(),
  state: z.string().optional(),
  status: statusSchema.nullish(),
  baseModel: z.string().optional(),
  warmStartFrom: z.string().optional(),
  outputModel: z.string().optional(),
  epochs: z.number().optional(),
  batchSizeSamples: z.number().optional(),
  jobProgress: z.record(z.number()).nullish(),
});
export type FireworksJob = z.output<typeof jobSchema>;

export const datasetListSchema = z.object({ datasets: z.array(datasetSchema).optional(), nextPageToken: z.string().optional() });
export const jobListSchema = z.object({ supervisedFineTuningJobs: z.array(jobSchema).optional(), nextPageToken: z.string().optional() });

/** `:getUploadEndpoint`: a signed URL per file name. */
export const uploadEndpointSchema = z.object({ filenameToSignedUrls: z.record(z.string()).optional() });

/** A batch inference job (./batch.ts): its state, model, output dataset and progress counts. */
export const batchJobSchema = z.object({
  name: z.string(),
  displayName: z.string().optional(),
  createTime: z.string().optional(),
  updateTime: z.string().optional(),
  inputDatasetId: z.string().optional(),
  state: z.string().optional(),
  status: z.object({ code: z.string().optional(), message: z.string().optional() }).optional(),
  model: z.string().optional(),
  outputDatasetId: z.string().optional(),
  jobProgress: z
    .object({
      totalInputRequests: z.number().optional(),
      successfullyProcessedRequests: z.number().optional(),
      failedRequests: z.number().optional(),
      inputTokens: z.number().optional(),
      outputTokens: z.number().optional(),
    })
    .nullish(),
});
export type FireworksBatchJob = z.output<typeof batchJobSchema>;
export const batchJobListSchema = z.object({ batchInferenceJobs: z.array(batchJobSchema).optional(), nextPageToken: z.string().optional() });
