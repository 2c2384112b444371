/**
 * Bedrock base models by family: the family decides the training record format (dataset.ts) and
 * the hyperparameters a job takes (create-job.ts). A model arrives as an id
 * (`amazon.nova-micro-v1:0:128k`) or an ARN whose resource part holds the id
 * (`…:foundation-model/amazon.nova-micro-v1:0:128k`, or a custom model's to tune it further).
 */
import { GatewayError } from '../../errors';

/** `nova`: the Converse format; `claude`: Anthropic's `{system, messages}`; `text`: `{prompt, completion}` (Titan Text, Llama, Command). */
export type ModelFamily = 'nova' | 'claude' | 'text';

const FAMILIES: ReadonlyArray<[prefix: string, family: ModelFamily]> = [
  ['amazon.nova', 'nova'],
  ['anthropic.', 'claude'],
  ['amazon.titan-text', 'text'],
  ['meta.llama', 'text'],
  ['cohere.command', 'text'],
];

/** The model id within an ARN (the first part of its resource path), or the id itself. */
export const modelIdOf = (model: string) => (model.startsWith('arn:') ? (model.split('/')[1] ?? model) : model);

/** The family of a base model; 400 for one whose format the gateway does not know. */
export function modelFamily(model: string | undefined): ModelFamily {
  if (model === undefined) {
    throw new GatewayError('invalid_request', "is required: Amazon Bedrock's training format depends on the base model the dataset is for", {
      param: 'x-gateway-provider-model',
      aboutField: true,
      code: 'missing_setting',
    });
  }
  const id = modelIdOf(model);
  const found = FAMILIES.find(([prefix]) => id.startsWith(prefix));
  if (!found) {
    const known = 'Amazon Nova, Anthropic Claude, Amazon Titan Text, Meta Llama, Cohere Command';
    throw new GatewayError('invalid_request', `The base model '${model}' is not one whose Amazon Bedrock training format the gateway knows (${known})`, {
      code: 'unsupported_model',
    });
  }
  return found[1];
}
