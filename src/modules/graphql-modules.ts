import 'reflect-metadata';
/** Every domain module's GraphQL contribution; the schema is built from this list (a new module adds one line). */
import type { GraphQLModule } from '../graphql/schema';
import { filesGraphQL } from './files/file.resolver';
import { fineTuningGraphQL } from './fine-tuning/fine-tuning.resolver';
import { integrationsGraphQL } from './integrations/integration.resolver';
import { labelsGraphQL } from './labels/label.resolver';
import { partialsGraphQL } from './partials/partial.resolver';

export const GRAPHQL_MODULES: readonly GraphQLModule[] = [labelsGraphQL, partialsGraphQL, filesGraphQL, integrationsGraphQL, fineTuningGraphQL];
