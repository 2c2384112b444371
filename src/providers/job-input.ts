/**
 * Checks of a create-job input against what a provider's API can take: a setting it has no place for
 * is a 400 naming the field as the caller sent it, never silently dropped (api.md §6.2).
 */
import type { z } from 'zod';
import { invalidField, type FieldPath } from '../errors';
import type { JobOptionsSchema } from './module';
import type { CreateJobInput, Hyperparameters } from './types';

/** Where the caller put a hyperparameter: `method.<type>.hyperparameters.<name>`, or the legacy top-level form. */
export function hyperparameterPath(input: CreateJobInput, name: keyof Hyperparameters): FieldPath {
  const type = input.method?.type ?? 'supervised';
  return input.legacyHyperparameters ? ['hyperparameters', name] : ['method', type, 'hyperparameters', name];
}

export interface Unsupported {
  /** Hyperparameters the provider has no counterpart for, each with what to send instead. */
  hyperparameters?: ReadonlyArray<readonly [keyof Hyperparameters, string]>;
  /**
   * Client mode only (no gateway job id): `metadata` and `seed` where the provider cannot store or take
   * them. A hosted job keeps both in the gateway (and always has a seed), so they are not refused there.
   */
  metadata?: boolean;
  seed?: boolean;
}

/** Throws a 400 naming the first field of `input` the provider cannot take. */
export function refuseUnsupported(input: CreateJobInput, title: string, unsupported: Unsupported): void {
  for (const [name, instead] of unsupported.hyperparameters ?? []) {
    const value = input.method?.hyperparameters[name];
    // "auto" lets the provider choose, which it always does for a setting it lacks.
    if (value === undefined || value === 'auto') continue;
    throw invalidField(hyperparameterPath(input, name), `is not supported by ${title}: ${instead}`, 'unsupported_parameter');
  }
  if (input.gatewayJobId !== undefined) return;
  if (unsupported.metadata && input.metadata !== undefined)
    throw invalidField('metadata', `is not supported by ${title}: it stores no metadata with a job`, 'unsupported_parameter');
  if (unsupported.seed && input.seed !== undefined) throw invalidField('seed', `is not supported by ${title}`, 'unsupported_parameter');
}

/** The input's job options as the provider declared them (ProviderClient.createJob has checked them against the same schema). */
export const readJobOptions = <S extends JobOptionsSchema>(schema: S, input: CreateJobInput): z.output<S> => schema.parse(input.options);
