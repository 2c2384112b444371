import { unixSeconds } from '../../http/openai-shapes';
import type { ServedModel } from './model.model';
import type { ModelType } from './model.types';

/** OpenAI's model object. Like OpenAI's fine-tuned models, it is owned by the organisation. */
export const toModelJson = (model: ServedModel) => ({
  id: model.id,
  object: 'model' as const,
  created: unixSeconds(model.created),
  owned_by: model.organisationId,
});

export const toModelType = (model: ServedModel): ModelType => ({
  id: model.id,
  created: model.created,
  ownedBy: model.organisationId,
  provider: model.provider,
  fineTuningJobId: model.fineTuningJobId,
});
