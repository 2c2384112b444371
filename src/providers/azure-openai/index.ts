/**
 * Azure OpenAI: OpenAI's files and fine-tuning API on a resource's endpoint, authenticated with an
 * `api-key` header and versioned by an `api-version` query parameter. The 2024-10-21 API takes
 * hyperparameters top-level (no `method`) and no `metadata`; files are `pending` until Azure has
 * processed them, so hosted jobs wait for that before creating the job.
 */
import { GatewayError } from '../../errors';
import { openAICompatibleOperations, type OpenAICompatibleConnection } from '../openai-compatible';
import { CHAT_FIELDS } from '../chat-fields';
import { chatCompletions } from '../openai-compatible/chat';
import { openAIBatchSteps } from '../openai-compatible/batches';
import { listModels } from '../openai-compatible/models';
import { defineSettings, PATTERNS } from '../settings';
import { type ChatAnswer, type ChatRequest } from '../types';
import { fileStateOf, type ProviderModule } from '../module';
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
  /** The Global-Batch (or Data Zone Batch) deployment batches run on: every line's `model`. */
  batchDeployment: {
    header: 'x-gateway-azure-batch-deployment',
    key: 'x-gateway-azure-batch-deployment',
    aliases: ['batch_deployment'],
    ...PATTERNS.pathId,
  },
});

interface AzureConnection extends OpenAICompatibleConnection {
  /** The deployment chat completions go to (`x-gateway-azure-deployment-id`). */
  deploymentId: string | undefined;
  /** The Global-Batch deployment batches run on (`x-gateway-azure-batch-deployment`). */
  batchDeployment: string | undefined;
}

/**
 * Azure's Global Batch: OpenAI's batch wire, every line's `model` the integration's Global-Batch
 * deployment, the create `endpoint` written `/chat/completions`, and an input file used only once
 * Azure has processed it. Azure's FAQ: fine-tuned models do not run in batches, so those stay on the
 * gateway runner, as does an integration without a Global-Batch deployment. In client mode the
 * caller's file goes as it is (its lines name the Global-Batch deployment), up to Azure's 100 000 requests.
 */
const batch = openAIBatchSteps<AzureConnection>(
  { endpoint: '/chat/completions', model: (conn, model) => conn.batchDeployment ?? model, waitForFile: true, limits: { maxRequests: 100_000 } },
  (conn, query) => {
    if (query.hosted) return "Azure OpenAI's Global Batch does not run fine-tuned models";
    // In client mode the caller's lines name the deployment themselves, as Azure takes them.
    if (!conn.batchDeployment && !query.client) return 'the integration names no Global-Batch deployment (x-gateway-azure-batch-deployment)';
    return null;
  },
);

const DEPLOYMENT_HEADER = 'x-gateway-azure-deployment-id';

const PROVISION = `deploy it on the resource and name the deployment in ${DEPLOYMENT_HEADER}`;

/**
 * Azure answers chat only on a deployment (`model` in the body is ignored there). Without one named,
 * a hosted job's model is a 400 `deployment_required` saying what to provision; in client mode the
 * model is taken for the deployment's name, as Azure's own SDK does, and Azure's "no such
 * deployment" comes back with that advice added.
 */
async function chat(conn: AzureConnection, request: ChatRequest): Promise<ChatAnswer> {
  if (!conn.deploymentId && request.hosted) {
    const message = `Azure OpenAI serves ${request.model} only on a deployment: ${PROVISION}`;
    throw new GatewayError('invalid_request', message, { param: DEPLOYMENT_HEADER, code: 'deployment_required' });
  }
  const deployment = conn.deploymentId ?? request.model;
  try {
    // The deployment id matched the path-id pattern, a model is any string: either stays one path segment.
    return await chatCompletions(conn, urlPath`/deployments/${deployment}/chat/completions`, request);
  } catch (err) {
    const undeployed = err instanceof GatewayError && err.status === 404 && !conn.deploymentId;
    throw undeployed ? err.withHint(`no deployment is named ${request.model}: ${PROVISION}`) : err;
  }
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
    // An Azure OpenAI resource is a Cognitive Services account: the owner of its jobs.
    account: s.resourceName,
    deploymentId: s.deploymentId,
    batchDeployment: s.batchDeployment,
  }),
  // The resource's models (`GET /openai/models`); chat names a deployment, so `@slug/<id>` reaches one deployed under that name.
  operations: { ...openAICompatibleOperations, chat, listModels: (conn) => listModels(conn, 'azure-openai') },
  // OpenAI's request on a deployment: the body goes as the caller sent it, unknown fields included.
  chatSupport: { fields: CHAT_FIELDS, unknownFields: true },
  hosting: {
    fileState: fileStateOf,
  },
  batch,
};
