/**
 * Google's answers as the adapter reads them (Cloud Storage objects, Vertex AI tuning jobs, Gemini
 * responses), parsed rather than trusted: an answer without what the gateway needs is the
 * provider's failure (502), never a crash further on. Proto3 JSON carries int64 values as strings
 * (numbers are accepted too) and times as RFC 3339; fields the gateway does not read are ignored.
 */
import { z } from 'zod';

const int64 = z.union([z.string().regex(/^-?\d+$/), z.number().int()]).transform(Number);
const timestamp = z.string().refine((value) => !Number.isNaN(Date.parse(value)), 'an RFC 3339 time');

export const gcsObjectSchema = z.object({
  name: z.string().min(1),
  bucket: z.string().min(1),
  size: int64,
  timeCreated: timestamp,
  metadata: z.record(z.string()).optional(),
});
export type GcsObject = z.output<typeof gcsObjectSchema>;

export const gcsObjectListSchema = z.object({
  items: z.array(gcsObjectSchema).optional(),
  nextPageToken: z.string().optional(),
});

const hyperParametersSchema = z.object({
  epochCount: int64.optional(),
  learningRateMultiplier: z.number().optional(),
  learningRate: z.number().optional(),
  batchSize: int64.optional(),
});

const checkpointSchema = z.object({
  checkpointId: z.string(),
  epoch: int64.optional(),
  step: int64.optional(),
  endpoint: z.string().optional(),
});

export const tuningJobSchema = z.object({
  name: z.string().regex(/\/tuningJobs\/[^/]+$/),
  baseModel: z.string().optional(),
  tunedModelDisplayName: z.string().optional(),
  labels: z.record(z.string()).optional(),
  supervisedTuningSpec: z
    .object({
      trainingDatasetUri: z.string().optional(),
      validationDatasetUri: z.string().optional(),
      hyperParameters: hyperParametersSchema.optional(),
    })
    .optional(),
  state: z.string().optional(),
  createTime: timestamp,
  startTime: timestamp.optional(),
  endTime: timestamp.optional(),
  error: z.object({ code: z.number().int().optional(), message: z.string().optional() }).optional(),
  tuningDataStats: z
    .object({
      supervisedTuningDataStats: z
        .object({
          tuningDatasetExampleCount: int64.optional(),
          totalBillableTokenCount: int64.optional(),
          tuningStepCount: int64.optional(),
        })
        .optional(),
    })
    .optional(),
  tunedModel: z
    .object({
      model: z.string().optional(),
      endpoint: z.string().optional(),
      checkpoints: z.array(checkpointSchema).optional(),
    })
    .optional(),
});
export type TuningJob = z.output<typeof tuningJobSchema>;
export type TuningCheckpoint = z.output<typeof checkpointSchema>;

export const tuningJobListSchema = z.object({
  tuningJobs: z.array(tuningJobSchema).optional(),
  nextPageToken: z.string().optional(),
});

const logprobCandidate = z.object({ token: z.string().optional(), logProbability: z.number().optional() });

export const generateContentSchema = z.object({
  candidates: z
    .array(
      z.object({
        index: z.number().int().nonnegative().optional(),
        content: z
          .object({
            parts: z
              .array(
                z.object({
                  text: z.string().optional(),
                  thought: z.boolean().optional(),
                  functionCall: z.object({ name: z.string(), args: z.record(z.unknown()).optional() }).optional(),
                }),
              )
              .optional(),
          })
          .optional(),
        finishReason: z.string().optional(),
        logprobsResult: z
          .object({
            topCandidates: z.array(z.object({ candidates: z.array(logprobCandidate).optional() })).optional(),
            chosenCandidates: z.array(logprobCandidate).optional(),
          })
          .optional(),
      }),
    )
    .optional(),
  promptFeedback: z.object({ blockReason: z.string().optional() }).optional(),
  usageMetadata: z
    .object({
      promptTokenCount: z.number().int().optional(),
      candidatesTokenCount: z.number().int().optional(),
      totalTokenCount: z.number().int().optional(),
      cachedContentTokenCount: z.number().int().optional(),
      thoughtsTokenCount: z.number().int().optional(),
    })
    .optional(),
  responseId: z.string().optional(),
  createTime: timestamp.optional(),
});
export type GenerateContentResponse = z.output<typeof generateContentSchema>;

/** A streamed event may carry Google's error instead of a response. */
export const streamErrorSchema = z.object({
  error: z.object({ message: z.string().optional(), status: z.string().optional() }).optional(),
});

/** An answer that does not fit is the provider's failure: a 502 naming the field (../answer.ts). */
export { parseAnswer } from '../answer';

/** RFC 3339 → Unix seconds. */
export const unixSeconds = (time: string): number => Math.floor(Date.parse(time) / 1000);
