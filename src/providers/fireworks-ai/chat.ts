/**
 * Chat through Fireworks' OpenAI-compatible inference API (`/inference/v1/chat/completions`). A base
 * model (`accounts/fireworks/models/<id>`, or just `<id>`) answers directly. A model of an account —
 * what a fine-tuning job produces — answers only on a dedicated deployment someone has provisioned:
 * the caller names it in `x-gateway-fireworks-deployment` (the call then goes to
 * `<model>#accounts/<account>/deployments/<deployment>`), or names the deployed model itself with a
 * `#…` suffix; otherwise the answer is a 400 `deployment_required` saying what to provision.
 */
import { GatewayError } from '../../errors';
import { chatCompletions } from '../openai-compatible/chat';
import type { ChatAnswer, ChatRequest } from '../types';
import { TITLE, type FireworksConnection } from './connection';

export const DEPLOYMENT_HEADER = 'x-gateway-fireworks-deployment';

export function chat(conn: FireworksConnection, request: ChatRequest): Promise<ChatAnswer> {
  return chatCompletions(conn, '/inference/v1/chat/completions', { ...request, model: servedModel(conn, request.model) });
}

/** The model string Fireworks routes to the deployment that serves `model`. */
function servedModel(conn: FireworksConnection, model: string): string {
  if (model.includes('#')) return model;
  if (!model.startsWith('accounts/')) return `accounts/fireworks/models/${model}`;
  if (model.startsWith('accounts/fireworks/')) return model;
  if (!conn.deployment) {
    const message =
      `${TITLE} serves ${model} only on a dedicated deployment: deploy it (a deployment of the model, or loaded onto a ` +
      `deployment of its base model with add-ons enabled) and name the deployment in ${DEPLOYMENT_HEADER}`;
    throw new GatewayError('invalid_request', message, { param: DEPLOYMENT_HEADER, code: 'deployment_required' });
  }
  return `${model}#accounts/${conn.account}/deployments/${conn.deployment}`;
}
