/**
 * POST …/supervisedFineTuningJobs. Never retried: a repeat after a lost answer would start a second
 * job. A hosted job gets a job id derived from the gateway job id (`gw-<uuid>`), so an interrupted
 * submission finds it (findJob) instead of creating another. The base model is
 * `accounts/fireworks/models/<model>` unless given as a resource name; the suffix becomes the display
 * name and the start of the output model's id (made unique: output models share one namespace per
 * account). OpenAI's `batch_size` (examples per batch) is Fireworks' `batchSizeSamples`; Fireworks
 * takes an absolute learning rate only, and supervised training only.
 */
import { randomBytes } from 'node:crypto';
import { invalidField } from '../../errors';
import { readJobOptions, refuseUnsupported } from '../job-input';
import type { CreateJobInput, HyperparameterValue, ProviderJob } from '../types';
import { controlRequest, fullName, RESOURCE_ID, slug, TITLE, type FireworksConnection } from './connection';
import { fireworksJobOptions } from './job-options';
import { toJob } from './mappers';
import { jobSchema } from './schemas';

export async function createJob(conn: FireworksConnection, input: CreateJobInput): Promise<ProviderJob> {
  const json = toCreateBody(conn, input);
  const query = { supervisedFineTuningJobId: input.gatewayJobId === undefined ? undefined : hostedJobId(input.gatewayJobId) };
  return toJob(conn, await controlRequest(conn, { answer: jobSchema, method: 'POST', path: '/supervisedFineTuningJobs', query, json }));
}

/** The Fireworks job id of a hosted job: `gw-` and the gateway job id, a valid resource id. */
export const hostedJobId = (gatewayJobId: string) => `gw-${slug(gatewayJobId, 59)}`;

export function toCreateBody(conn: FireworksConnection, input: CreateJobInput): Record<string, unknown> {
  refuseUnsupported(input, TITLE, {
    hyperparameters: [['learningRateMultiplier', 'give an absolute learning rate as provider_options.learning_rate']],
    metadata: true,
    seed: true,
  });
  if (input.method?.type === 'dpo')
    throw invalidField(['method', 'type'], `must be "supervised": ${TITLE} runs preference (DPO) training as another kind of job`, 'unsupported_parameter');
  const h = input.method?.hyperparameters ?? {};
  const body: Record<string, unknown> = {
    dataset: fullName(conn, 'datasets', input.trainingFile),
    evaluationDataset: input.validationFile === undefined ? undefined : fullName(conn, 'datasets', input.validationFile),
    baseModel: input.model.startsWith('accounts/') ? input.model : `accounts/fireworks/models/${input.model}`,
    displayName: input.suffix,
    outputModel: outputModelId(input),
    epochs: valueOf(h.nEpochs),
    batchSizeSamples: valueOf(h.batchSize),
    learningRate: readJobOptions(fireworksJobOptions, input).learningRate,
  };
  return Object.fromEntries(Object.entries(body).filter(([, value]) => value !== undefined));
}

/** A hyperparameter's value, or undefined for "auto" (Fireworks then chooses). */
const valueOf = (value: HyperparameterValue | undefined) => (value === 'auto' ? undefined : value);

/**
 * The output model's id from the suffix, with a unique tail (from the gateway job id when hosted, so
 * a resubmission asks for the same model); without a suffix Fireworks names it after the job.
 */
function outputModelId(input: CreateJobInput): string | undefined {
  const stem = input.suffix === undefined ? '' : slug(input.suffix, 50);
  if (!stem) return undefined;
  const tail = input.gatewayJobId === undefined ? randomBytes(4).toString('hex') : slug(input.gatewayJobId, 8);
  const id = `${stem}-${tail}`.replace(/-+$/, '');
  return RESOURCE_ID.test(id) ? id : undefined;
}
