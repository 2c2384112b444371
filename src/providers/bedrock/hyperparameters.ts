/**
 * OpenAI's hyperparameters as Bedrock's, which are strings named per model family (providers.md
 * §4.3): `n_epochs` → `epochCount`, `batch_size` → `batchSize`; Claude takes a
 * `learningRateMultiplier`, the others (Nova, Titan, Llama) an absolute `learningRate`
 * (`provider_options.learning_rate`). "auto" leaves Bedrock's default. Anything a model cannot take is
 * a 400 naming the field — never dropped. Bedrock fine-tuning is supervised: DPO is refused.
 */
import { invalidField, type FieldPath } from '../../errors';
import type { CreateJobInput, HyperparameterValue } from '../types';
import { modelIdOf } from './models';

const set = (out: Record<string, string>, name: string, value: HyperparameterValue | undefined) => {
  if (typeof value === 'number') out[name] = String(value);
};

/** Bedrock's hyperParameters for the job, or undefined when every value is Bedrock's default. */
export function bedrockHyperparameters(input: CreateJobInput, learningRate: number | undefined): Record<string, string> | undefined {
  const method = input.method;
  if (method?.type === 'dpo') throw invalidField(['method', 'type'], 'must be "supervised": Amazon Bedrock fine-tuning has no DPO');
  const at = (name: string): FieldPath => (input.legacyHyperparameters ? ['hyperparameters', name] : ['method', 'supervised', 'hyperparameters', name]);
  const h = method?.hyperparameters ?? {};
  const claude = modelIdOf(input.model).startsWith('anthropic.');
  const out: Record<string, string> = {};
  set(out, 'epochCount', h.nEpochs);
  set(out, 'batchSize', h.batchSize);
  if (typeof h.learningRateMultiplier === 'number' && !claude) {
    throw invalidField(
      at('learningRateMultiplier'),
      `is not taken by ${input.model} on Amazon Bedrock: send an absolute rate as provider_options.learning_rate`,
    );
  }
  set(out, 'learningRateMultiplier', h.learningRateMultiplier);
  if (learningRate !== undefined && claude) {
    throw invalidField(['providerOptions', 'learningRate'], `is not taken by ${input.model} on Amazon Bedrock: Claude models take learning_rate_multiplier`);
  }
  set(out, 'learningRate', learningRate);
  return Object.keys(out).length ? out : undefined;
}
