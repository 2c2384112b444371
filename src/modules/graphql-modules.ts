import 'reflect-metadata';
/** Every domain module's GraphQL contribution; the schema is built from this list (a new module adds one line). */
import type { GraphQLModule } from '../graphql/schema';
import { batchesGraphQL } from './batches/batch.resolver';
import { chatGraphQL } from './chat/chat.resolver';
import { filesGraphQL } from './files/file.resolver';
import { fineTuningGraphQL } from './fine-tuning/fine-tuning.resolver';
import { integrationsGraphQL } from './integrations/integration.resolver';
import { labelsGraphQL } from './labels/label.resolver';
import { modelsGraphQL } from './models/model.resolver';
import { partialsGraphQL } from './partials/partial.resolver';
import { usageGraphQL } from './usage/usage.resolver';

export const GRAPHQL_MODULES: readonly GraphQLModule[] = [
  labelsGraphQL,
  partialsGraphQL,
  filesGraphQL,
  integrationsGraphQL,
  fineTuningGraphQL,
  modelsGraphQL,
  chatGraphQL,
  batchesGraphQL,
  usageGraphQL,
];
