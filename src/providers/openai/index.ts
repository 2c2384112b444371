/** OpenAI: the reference API the gateway's files and fine-tuning faces follow. */
import { openAICompatibleOperations, type OpenAICompatibleConnection } from '../openai-compatible';
import { CHAT_FIELDS } from '../chat-fields';
import { chatCompletions } from '../openai-compatible/chat';
import { listModels } from '../openai-compatible/models';
import { openAIBatchSteps } from '../openai-compatible/batches';
import { defineSettings } from '../settings';
import type { ProviderModule } from '../module';

const settings = defineSettings({
  apiKey: { header: 'authorization', bearer: true, key: 'api_key', secret: true, required: true, maxLength: 512 },
  organization: {
    header: 'x-gateway-openai-organization',
    key: 'x-gateway-openai-organization',
    aliases: ['organization'],
    pinned: true,
    pattern: /^[A-Za-z0-9_-]{1,128}$/,
    format: 'an organization id',
  },
  project: {
    header: 'x-gateway-openai-project',
    key: 'x-gateway-openai-project',
    aliases: ['project'],
    pinned: true,
    pattern: /^[A-Za-z0-9_-]{1,128}$/,
    format: 'a project id',
  },
});

export const openaiProvider: ProviderModule<typeof settings, OpenAICompatibleConnection> = {
  name: 'openai',
  title: 'OpenAI',
  settings,
  endpoints: { api: { env: 'GATEWAY_OPENAI_BASE_URL', default: 'https://api.openai.com/v1' } },
  connect: (s, env) => ({
    title: 'OpenAI',
    baseUrl: env.baseUrls.api,
    headers: {
      authorization: `Bearer ${s.apiKey}`,
      ...(s.organization ? { 'openai-organization': s.organization } : {}),
      ...(s.project ? { 'openai-project': s.project } : {}),
    },
    query: {},
    secrets: [s.apiKey],
    http: env.http,
    methodOnCreate: true,
    metadataOnCreate: true,
  }),
  operations: {
    ...openAICompatibleOperations,
    chat: (conn, request) => chatCompletions(conn, '/chat/completions', request),
    listModels: (conn) => listModels(conn, 'openai'),
  },
  // The body goes as the caller sent it (model replaced), fields the gateway does not know included.
  chatSupport: { fields: CHAT_FIELDS, unknownFields: true },
  // Any model, fine-tuned ones included (OpenAI's FAQ: "most of our models"; a model it refuses fails the batch with its reason).
  batch: openAIBatchSteps({ endpoint: '/v1/chat/completions', model: (_conn, model) => model, waitForFile: false }, () => null),
};
