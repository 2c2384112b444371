/**
 * Azure OpenAI: OpenAI's files and fine-tuning API on a resource's endpoint, authenticated with an
 * `api-key` header and versioned by an `api-version` query parameter. The 2024-10-21 API takes
 * hyperparameters top-level (no `method`) and no `metadata`; files are `pending` until Azure has
 * processed them, so hosted jobs wait for that before creating the job.
 */
import { openAICompatibleOperations, type OpenAICompatibleConnection } from '../openai-compatible';
import { defineSettings, PATTERNS } from '../settings';
import type { ProviderModule } from '../types';

const settings = defineSettings({
  apiKey: { header: 'authorization', bearer: true, key: 'api_key', secret: true, required: true, maxLength: 512 },
  resourceName: {
    header: 'x-gateway-azure-resource-name',
    key: 'x-gateway-azure-resource-name',
    aliases: ['resource_name'],
    required: true,
    ...PATTERNS.dnsLabel,
  },
  apiVersion: {
    header: 'x-gateway-azure-api-version',
    key: 'x-gateway-azure-api-version',
    aliases: ['api_version'],
    default: '2024-10-21',
    pattern: /^\d{4}-\d{2}-\d{2}(-preview)?$/,
    format: 'an API version like 2024-10-21',
  },
  deploymentId: {
    header: 'x-gateway-azure-deployment-id',
    key: 'x-gateway-azure-deployment-id',
    aliases: ['deployment_name', 'deployment_id'],
    ...PATTERNS.pathId,
  },
});

/** `method` (and `metadata`) on create arrived with the 2025 preview API versions. */
const takesMethod = (apiVersion: string) => apiVersion >= '2025-03-01';

export const azureOpenAIProvider: ProviderModule<typeof settings, OpenAICompatibleConnection> = {
  name: 'azure-openai',
  title: 'Azure OpenAI',
  settings,
  endpoints: { api: { env: 'GATEWAY_AZURE_OPENAI_BASE_URL', default: 'https://{resource}.openai.azure.com/openai' } },
  connect: (s, env) => ({
    title: 'Azure OpenAI',
    // The resource name matched a DNS-label pattern: it cannot change the host beyond its own label.
    baseUrl: env.baseUrls.api.replace('{resource}', s.resourceName),
    headers: { 'api-key': s.apiKey },
    query: { 'api-version': s.apiVersion },
    secrets: [s.apiKey],
    http: env.http,
    methodOnCreate: takesMethod(s.apiVersion),
    metadataOnCreate: false,
  }),
  operations: openAICompatibleOperations,
  hosting: {
    fileState: (file) => (file.status === 'processed' ? 'ready' : file.status === 'error' || file.status === 'deleted' ? 'failed' : 'pending'),
  },
};
