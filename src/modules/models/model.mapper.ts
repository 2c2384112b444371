import { unixSeconds } from '../../http/openai-shapes';
import type { IntegrationModel } from './integration-models';
import type { ServedModel } from './model.model';
import type { ModelType } from './model.types';

/** OpenAI's model object. Like OpenAI's fine-tuned models, it is owned by the organisation. */
export const toModelJson = (model: ServedModel) => ({
  id: model.id,
  object: 'model' as const,
  created: unixSeconds(model.created),
  owned_by: model.organisationId,
});

/** An integration's model: the provider's owner and time (0, the epoch, when the provider gives none). */
export const toIntegrationModelJson = (model: IntegrationModel) => ({
  id: model.id,
  object: 'model' as const,
  created: model.created,
  owned_by: model.ownedBy,
});

export const toAnyModelJson = (model: ServedModel | IntegrationModel) => ('integration' in model ? toIntegrationModelJson(model) : toModelJson(model));

export const toModelType = (model: ServedModel): ModelType => ({
  id: model.id,
  created: model.created,
  ownedBy: model.organisationId,
  provider: model.provider,
  fineTuningJobId: model.fineTuningJobId,
  integration: null,
});

export const toIntegrationModelType = (model: IntegrationModel): ModelType => ({
  id: model.id,
  created: new Date(model.created * 1000),
  ownedBy: model.ownedBy,
  provider: model.provider,
  fineTuningJobId: null,
  integration: `@${model.integration}`,
});
