import { z } from 'zod';
import type { JobMethod, JobOptionValues } from '../../providers/types';
import { intInRange } from '../../validation/parse';

/**
 * Create-job input, camelCase at every depth, in OpenAI's structure: `method.<type>.hyperparameters`
 * (REST bodies arrive converted; GraphQL builds this shape from its own). Errors name fields by
 * their path here, which each face spells its own way.
 */

const autoOr = (value: z.ZodNumber, range: string) => z.union([z.literal('auto'), value], { errorMap: () => ({ message: `must be "auto" or ${range}` }) });

const baseHyperparameters = {
  nEpochs: autoOr(z.number().int().min(1).max(50), 'an integer between 1 and 50').optional(),
  batchSize: autoOr(z.number().int().min(1).max(256), 'an integer between 1 and 256').optional(),
  learningRateMultiplier: autoOr(z.number().positive().max(10), 'a number above 0 and at most 10').optional(),
};

const supervisedHyperparameters = z.object(baseHyperparameters).strict();
const dpoHyperparameters = z
  .object({ ...baseHyperparameters, beta: autoOr(z.number().positive().max(2), 'a number above 0 and at most 2').optional() })
  .strict();

const methodSchema = z.discriminatedUnion(
  'type',
  [
    z.object({ type: z.literal('supervised'), supervised: z.object({ hyperparameters: supervisedHyperparameters.optional() }).strict().optional() }).strict(),
    z.object({ type: z.literal('dpo'), dpo: z.object({ hyperparameters: dpoHyperparameters.optional() }).strict().optional() }).strict(),
  ],
  { errorMap: (issue, ctx) => ({ message: issue.code === 'invalid_union_discriminator' ? 'must be "supervised" or "dpo"' : ctx.defaultError }) },
);

/** JSON maps: typed callers (GraphQL's JSON scalar) hand them over as they came, checked here. */
export const metadataSchema = z
  .unknown()
  .pipe(z.record(z.string().min(1).max(64), z.string().max(512)).refine((m) => Object.keys(m).length <= 16, { message: 'holds at most 16 key-value pairs' }));

/** Settings keyed by their header names (api.md §6), checked against the provider's once the integration is known. */
export const gatewayOptionsSchema = z.unknown().pipe(z.record(z.string().min(1).max(2048)));

const optionText = z.string().min(1).max(2048);

/**
 * `model` (the provider's own id of the base model) and the job options of the provider, which each
 * provider declares and checks once the provider is known (ProviderClient.jobOptions).
 */
const providerOptionsSchema = z.unknown().pipe(z.object({ model: z.string().trim().min(1).max(256).optional() }).catchall(z.unknown()));

/** An optional field that a client may also send as null (OpenAI SDKs do for unset values). */
const opt = <T extends z.ZodTypeAny>(schema: T) => schema.nullish().transform((v): z.output<T> | undefined => v ?? undefined);

export const createJobSchema = z
  .object({
    model: z.string().trim().min(1).max(256),
    trainingFile: z.string().min(1).max(200),
    validationFile: opt(z.string().min(1).max(200)),
    suffix: opt(z.string().min(1).max(64)),
    seed: opt(z.number().int().min(0).max(2_147_483_647)),
    method: opt(methodSchema),
    hyperparameters: opt(supervisedHyperparameters),
    metadata: opt(metadataSchema),
    gatewayOptions: gatewayOptionsSchema.optional(),
    providerOptions: opt(providerOptionsSchema),
    // The reference interface also accepts these (Amazon Bedrock) options at the top level.
    roleArn: opt(optionText),
    jobName: opt(optionText),
    outputFile: opt(optionText),
  })
  .strict()
  .superRefine((input, ctx) => {
    if (input.method && input.hyperparameters) {
      ctx.addIssue({ code: 'custom', path: ['hyperparameters'], message: 'is the legacy form of method.<type>.hyperparameters: send one or the other' });
    }
  });

const page = (defaultLimit: number) => z.object({ after: z.string().min(1).max(200).optional(), limit: intInRange(1, 100).default(defaultLimit) }).strict();

export const listJobsSchema = page(20);
export const listEventsSchema = page(20);
export const listCheckpointsSchema = page(10);

export type CreateJobInput = z.input<typeof createJobSchema>;
export type CreateJobData = z.output<typeof createJobSchema>;
export type ListJobsInput = z.input<typeof listJobsSchema>;
export type ListEventsInput = z.input<typeof listEventsSchema>;
export type ListCheckpointsInput = z.input<typeof listCheckpointsSchema>;

/** What a create request asks of the provider, in the contract's terms (both modes). */
export interface RequestedJob {
  /** `method`, or the legacy top-level `hyperparameters` as supervised; undefined when the caller gave neither. */
  method: JobMethod | undefined;
  legacy: boolean;
  /** `provider_options.model`: the provider's own id of the base model, when it differs from `model`. */
  providerModel: string | undefined;
  providerOptions: JobOptionValues;
}

export function requestedJob(data: CreateJobData): RequestedJob {
  const { model: providerModel, ...providerOptions } = {
    ...definedOnly({ roleArn: data.roleArn, jobName: data.jobName, outputFile: data.outputFile }),
    ...data.providerOptions,
  };
  const legacy = !data.method && data.hyperparameters !== undefined;
  let method: JobMethod | undefined;
  if (data.method?.type === 'dpo') method = { type: 'dpo', hyperparameters: { ...data.method.dpo?.hyperparameters } };
  else if (data.method) method = { type: 'supervised', hyperparameters: { ...data.method.supervised?.hyperparameters } };
  else if (legacy) method = { type: 'supervised', hyperparameters: { ...data.hyperparameters } };
  return { method, legacy, providerModel, providerOptions };
}

const definedOnly = (o: Record<string, string | undefined>): Record<string, string> =>
  Object.fromEntries(Object.entries(o).filter((e): e is [string, string] => e[1] !== undefined));
