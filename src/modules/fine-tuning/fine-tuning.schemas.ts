import { z } from 'zod';
import { intInRange, workspaceRef } from '../../validation/parse';

/**
 * Create-job input. Top-level keys are camelCase (REST bodies go through camelizeKeys, GraphQL inputs
 * are mapped to this shape); nested OpenAI objects (`method`, `hyperparameters`, `provider_options`)
 * keep OpenAI's snake_case spelling, exactly as the caller sent them over REST.
 */

const autoOr = (field: string, value: z.ZodTypeAny, range: string) =>
  z.union([z.literal('auto'), value], { errorMap: () => ({ message: `${field} must be "auto" or ${range}` }) });

const baseHyperparameters = {
  n_epochs: autoOr('n_epochs', z.number().int().min(1).max(50), 'an integer between 1 and 50').optional(),
  batch_size: autoOr('batch_size', z.number().int().min(1).max(256), 'an integer between 1 and 256').optional(),
  learning_rate_multiplier: autoOr('learning_rate_multiplier', z.number().positive().max(10), 'a number above 0 and at most 10').optional(),
};

export const supervisedHyperparametersSchema = z.object(baseHyperparameters).strict();
export const dpoHyperparametersSchema = z
  .object({ ...baseHyperparameters, beta: autoOr('beta', z.number().positive().max(2), 'a number above 0 and at most 2').optional() })
  .strict();

export const METHOD_TYPES = ['supervised', 'dpo'] as const;
export type MethodType = (typeof METHOD_TYPES)[number];

const methodSchema = z
  .object({
    type: z.enum(METHOD_TYPES, { errorMap: () => ({ message: 'type must be "supervised" or "dpo"' }) }),
    supervised: z.object({ hyperparameters: supervisedHyperparametersSchema.optional() }).strict().optional(),
    dpo: z.object({ hyperparameters: dpoHyperparametersSchema.optional() }).strict().optional(),
  })
  .strict()
  .superRefine((method, ctx) => {
    const other = method.type === 'supervised' ? 'dpo' : 'supervised';
    if (method[other] !== undefined) {
      ctx.addIssue({ code: 'custom', path: [other], message: `${other} settings are not allowed when type is "${method.type}"` });
    }
  });

const metadataSchema = z
  .record(z.string().min(1, 'metadata keys must not be empty').max(64, 'metadata keys are at most 64 characters'), z.string({ invalid_type_error: 'metadata values must be strings' }).max(512, 'metadata values are at most 512 characters'))
  .refine((m) => Object.keys(m).length <= 16, { message: 'metadata holds at most 16 key-value pairs' });

/** `gateway_options` keys that name settings (not secrets); see api.md §6. */
export const GATEWAY_OPTION_KEYS = [
  'x-gateway-provider',
  'x-gateway-openai-organization',
  'x-gateway-openai-project',
  'x-gateway-azure-resource-name',
  'x-gateway-azure-api-version',
  'x-gateway-aws-region',
  'x-gateway-aws-s3-bucket',
  'x-gateway-aws-s3-object-key',
  'x-gateway-vertex-project-id',
  'x-gateway-vertex-region',
  'x-gateway-vertex-storage-bucket-name',
  'x-gateway-fireworks-account-id',
] as const;

/** Secrets are refused here: they would be stored with the job. They belong in an integration. */
const SECRET_OPTION_KEYS = new Set([
  'authorization',
  'x-gateway-api-key',
  'x-gateway-aws-access-key-id',
  'x-gateway-aws-secret-access-key',
  'x-gateway-aws-session-token',
  'x-gateway-vertex-service-account-json',
]);

const INTEGRATION_REF = /^@[A-Za-z0-9][A-Za-z0-9_-]{0,99}$/;

const gatewayOptionsSchema = z.record(z.unknown()).superRefine((options, ctx) => {
  for (const [key, value] of Object.entries(options)) {
    const lower = key.toLowerCase();
    if (SECRET_OPTION_KEYS.has(lower)) {
      ctx.addIssue({ code: 'custom', path: [key], message: `${key} is a credential: store it in an integration and name it with x-gateway-provider: "@slug"` });
    } else if (!(GATEWAY_OPTION_KEYS as readonly string[]).includes(key)) {
      ctx.addIssue({ code: 'custom', path: [key], message: `Unknown field '${key}'` });
    } else if (typeof value !== 'string' || value.length === 0 || value.length > 1000) {
      ctx.addIssue({ code: 'custom', path: [key], message: `${key} must be a non-empty string` });
    }
  }
  const provider = options['x-gateway-provider'];
  if (provider === undefined) {
    ctx.addIssue({ code: 'custom', path: ['x-gateway-provider'], message: 'x-gateway-provider is required: name a stored integration as "@slug"' });
  } else if (typeof provider === 'string' && !INTEGRATION_REF.test(provider)) {
    ctx.addIssue({
      code: 'custom',
      path: ['x-gateway-provider'],
      message: 'x-gateway-provider must name a stored integration as "@slug" (a hosted job needs stored credentials)',
    });
  }
});

const optionText = z.string().min(1).max(2048);

const providerOptionsSchema = z
  .object({
    model: z.string().trim().min(1).max(256).optional(),
    role_arn: optionText.optional(),
    job_name: optionText.optional(),
    output_file: optionText.optional(),
    training_type: optionText.optional(),
  })
  .strict();

/** An optional field that a client may also send as null (OpenAI SDKs do for unset values). */
const opt = <T extends z.ZodTypeAny>(schema: T) => schema.nullish().transform((v) => v ?? undefined);

export const createJobSchema = z
  .object({
    model: z.string({ required_error: 'model is required' }).trim().min(1, 'model must not be empty').max(256),
    trainingFile: z.string({ required_error: 'training_file is required', invalid_type_error: 'training_file must be a file id' }).min(1, 'training_file must not be empty').max(200),
    validationFile: opt(z.string({ invalid_type_error: 'validation_file must be a file id' }).min(1).max(200)),
    suffix: opt(z.string().min(1, 'suffix must be 1 to 64 characters').max(64, 'suffix must be 1 to 64 characters')),
    seed: opt(z.number().int('seed must be an integer').min(0).max(2_147_483_647)),
    method: opt(methodSchema),
    hyperparameters: opt(supervisedHyperparametersSchema),
    metadata: opt(metadataSchema),
    gatewayOptions: gatewayOptionsSchema.optional(),
    providerOptions: opt(providerOptionsSchema),
    // The reference interface also accepts these provider options at the top level.
    roleArn: opt(optionText),
    jobName: opt(optionText),
    outputFile: opt(optionText),
    workspaceId: workspaceRef.optional(),
  })
  .strict()
  .superRefine((input, ctx) => {
    if (input.method && input.hyperparameters) {
      ctx.addIssue({ code: 'custom', path: ['hyperparameters'], message: 'hyperparameters is the legacy form of method.<type>.hyperparameters: send one or the other' });
    }
    if (input.gatewayOptions === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['gatewayOptions'],
        message: 'gateway_options with "x-gateway-provider": "@slug" is required for a hosted job (it names the stored integration to run it with)',
      });
    }
  });

export const listJobsSchema = z
  .object({ after: z.string().min(1).max(200).optional(), limit: intInRange('limit', 1, 100).default(20) })
  .strict();

export const listEventsSchema = z
  .object({ after: z.string().min(1).max(200).optional(), limit: intInRange('limit', 1, 100).default(20) })
  .strict();

export const listCheckpointsSchema = z
  .object({ after: z.string().min(1).max(200).optional(), limit: intInRange('limit', 1, 100).default(10) })
  .strict();

export type CreateJobInput = z.input<typeof createJobSchema>;
export type CreateJobData = z.output<typeof createJobSchema>;
export type ListJobsInput = z.input<typeof listJobsSchema>;
export type ListEventsInput = z.input<typeof listEventsSchema>;
export type ListCheckpointsInput = z.input<typeof listCheckpointsSchema>;
