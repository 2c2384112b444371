/**
 * POST /fine-tunes. Never retried: a repeat after a lost answer would start a second job. LoRA is
 * Together's default training type (sent as nothing); `provider_options.training_type: "full"` asks
 * for full fine-tuning. Together takes an absolute learning rate only (`provider_options.learning_rate`),
 * so a learning-rate multiplier is refused naming the field.
 */
import { invalidField } from '../../errors';
import { readJobOptions, refuseUnsupported } from '../job-input';
import type { CreateJobInput, ProviderJob } from '../types';
import { apiRequest } from '../api';
import { TITLE, type TogetherConnection } from './connection';
import { togetherJobOptions } from './job-options';
import { toJob } from './mappers';
import { togetherJobSchema } from './schemas';

export async function createJob(conn: TogetherConnection, input: CreateJobInput): Promise<ProviderJob> {
  return toJob(await apiRequest(conn, { answer: togetherJobSchema, method: 'POST', path: '/fine-tunes', json: toCreateBody(input) }));
}

export function toCreateBody(input: CreateJobInput): Record<string, unknown> {
  refuseUnsupported(input, TITLE, {
    hyperparameters: [['learningRateMultiplier', 'give an absolute learning rate as provider_options.learning_rate']],
    metadata: true,
  });
  const options = readJobOptions(togetherJobOptions, input);
  const h = input.method?.hyperparameters ?? {};
  const body: Record<string, unknown> = {
    model: input.model,
    training_file: input.trainingFile,
    validation_file: input.validationFile,
    suffix: input.suffix,
    random_seed: input.seed,
    n_epochs: valueOf(h.nEpochs),
    batch_size: valueOf(h.batchSize),
    learning_rate: options.learningRate,
    training_method: input.method?.type === 'dpo' ? { method: 'dpo', ...(valueOf(h.beta) === undefined ? {} : { dpo_beta: h.beta }) } : undefined,
    training_type: trainingType(options.trainingType),
  };
  return Object.fromEntries(Object.entries(body).filter(([, value]) => value !== undefined));
}

/** A hyperparameter's value, or undefined for "auto" (Together then chooses). */
const valueOf = (value: number | 'auto' | undefined) => (value === 'auto' ? undefined : value);

function trainingType(requested: string | undefined): { type: 'Full' } | undefined {
  const type = requested?.toLowerCase();
  if (type === undefined || type === 'lora') return undefined;
  if (type === 'full') return { type: 'Full' };
  throw invalidField(['providerOptions', 'trainingType'], 'must be "lora" (the default) or "full"');
}
