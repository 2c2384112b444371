/**
 * Chat through Fireworks' OpenAI-compatible inference API (`/inference/v1/chat/completions`). A base
 * model (`accounts/fireworks/models/<id>`, or just `<id>`) answers directly. A model of an account —
 * what a fine-tuning job produces — answers only on a dedicated deployment someone has provisioned:
 * the caller names it in `x-gateway-fireworks-deployment` (the call then goes to
 * `<model>#accounts/<account>/deployments/<deployment>`), or names the deployed model itself with a
 * `#…` suffix. Without either, a hosted job's model is a 400 `deployment_required` saying what to
 * provision; in client mode the model goes to Fireworks as it is (the caller may have deployed it
 * another way) and a "not deployed" answer comes back as Fireworks' error with that advice added.
 */
import { GatewayError } from '../../errors';
import { allChatFieldsBut, type ChatSupport } from '../chat-fields';
import { chatCompletions, maxTokensOnly } from '../openai-compatible/chat';
import type { ChatAnswer, ChatRequest } from '../types';
import { TITLE, type FireworksConnection } from './connection';

export const DEPLOYMENT_HEADER = 'x-gateway-fireworks-deployment';

const PROVISION =
  'deploy it (a deployment of the model, or loaded onto a deployment of its base model with add-ons enabled) ' +
  `and name the deployment in ${DEPLOYMENT_HEADER}`;

/** Fireworks' chat API is OpenAI's without audio or file input, token biases, metadata, storage or service tiers. */
export const CHAT_SUPPORT: ChatSupport = {
  fields: allChatFieldsBut('input_audio', 'file', 'logit_bias', 'metadata', 'store', 'service_tier'),
  unknownFields: false,
};

export async function chat(conn: FireworksConnection, request: ChatRequest): Promise<ChatAnswer> {
  const model = servedModel(conn, request);
  try {
    return await chatCompletions(conn, '/inference/v1/chat/completions', { ...request, model }, maxTokensOnly);
  } catch (err) {
    const undeployed = err instanceof GatewayError && err.status === 404 && model === request.model && isAccountModel(model);
    throw undeployed ? err.withHint(`a fine-tuned model answers only on a dedicated deployment: ${PROVISION}`) : err;
  }
}

/** A model of an account (what fine-tuning produces), not one of Fireworks' own. */
const isAccountModel = (model: string) => model.startsWith('accounts/') && !model.startsWith('accounts/fireworks/');

/** The model string Fireworks routes to the deployment that serves `model`. */
function servedModel(conn: FireworksConnection, { model, hosted }: ChatRequest): string {
  if (model.includes('#')) return model;
  if (!model.startsWith('accounts/')) return `accounts/fireworks/models/${model}`;
  if (!isAccountModel(model)) return model;
  if (conn.deployment) return `${model}#accounts/${conn.account}/deployments/${conn.deployment}`;
  if (!hosted) return model;
  throw new GatewayError('invalid_request', `${TITLE} serves ${model} only on a dedicated deployment: ${PROVISION}`, {
    param: DEPLOYMENT_HEADER,
    code: 'deployment_required',
  });
}
