/**
 * Azure OpenAI: OpenAI's files and fine-tuning API on a resource's endpoint, authenticated with an
 * `api-key` header and versioned by an `api-version` query parameter. The 2024-10-21 API takes
 * hyperparameters top-level (no `method`) and no `metadata`; files are `pending` until Azure has
 * processed them, so hosted jobs wait for that before creating the job.
 */
import { GatewayError } from '../../errors';
import { openAICompatibleOperations, type OpenAICompatibleConnection } from '../openai-compatible';
import { chatCompletions } from '../openai-compatible/chat';
import { defineSettings, PATTERNS } from '../settings';
import type { ChatAnswer, ChatRequest, ProviderModule } from '../types';
import { urlPath } from '../url';

const settings = defineSettings({
  apiKey: { header: 'authorization', bearer: true, key: 'api_key', secret: true, required: true, maxLength: 512 },
  resourceName: {
    header: 'x-gateway-azure-resource-name',
    key: 'x-gateway-azure-resource-name',
    aliases: ['resource_name'],
    required: true,
    pinned: true,
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

interface AzureConnection extends OpenAICompatibleConnection {
  /** The deployment chat completions go to (`x-gateway-azure-deployment-id`). */
  deploymentId: string | undefined;
}

const DEPLOYMENT_HEADER = 'x-gateway-azure-deployment-id';

/**
 * Azure answers chat only on a deployment of the model (`model` in the body is ignored there): without
 * one named, the caller learns what to provision instead of getting Azure's 404.
 */
function chat(conn: AzureConnection, request: ChatRequest): Promise<ChatAnswer> {
  if (!conn.deploymentId) {
    const message = `Azure OpenAI serves ${request.model} only on a deployment: deploy it on the resource and name the deployment in ${DEPLOYMENT_HEADER}`;
    return Promise.reject(new GatewayError('invalid_request', message, { param: DEPLOYMENT_HEADER, code: 'deployment_required' }));
  }
  // The deployment id matched the path-id pattern; it is one path segment all the same.
  return chatCompletions(conn, urlPath`/deployments/${conn.deploymentId}/chat/completions`, request);
}

/** `method` (and `metadata`) on create arrived with the 2025 preview API versions. */
const takesMethod = (apiVersion: string) => apiVersion >= '2025-03-01';

export const azureOpenAIProvider: ProviderModule<typeof settings, AzureConnection> = {
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
    deploymentId: s.deploymentId,
  }),
  operations: { ...openAICompatibleOperations, chat },
  hosting: {
    fileState: (file) => (file.status === 'processed' ? 'ready' : file.status === 'error' || file.status === 'deleted' ? 'failed' : 'pending'),
  },
};
