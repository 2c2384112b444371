/**
 * Google Vertex AI: supervised tuning of Gemini models (GenAI tuning jobs) on datasets in Cloud
 * Storage, and chat with the tuned model on the endpoint Vertex serves it on. Credentials are a
 * service-account key (exchanged for access tokens, see auth.ts) or, in client mode, an access token
 * the caller brings. Datasets are converted to Gemini's format as they upload (dataset.ts).
 */
import { GatewayError } from '../../errors';
import { defineSettings, PATTERNS, type SettingValues } from '../settings';
import { vertexBatch } from './batch';
import { vertexClientBatch } from './client-batch';
import type { ProviderEnvironment, ProviderModule } from '../module';
import { bearerCredentials, serviceAccount, serviceAccountCredentials, serviceAccountProblem, type GoogleCredentials } from './auth';
import { cancelJob } from './cancel-job';
import { chat } from './chat';
import { VERTEX_CHAT_SUPPORT } from './chat-support';
import type { VertexConnection } from './connection';
import { createJob } from './create-job';
import { geminiDataset } from './dataset';
import { deleteFile, fileContent, getFile, listFiles } from './files';
import { findJob } from './find-job';
import { getJob } from './get-job';
import { vertexJobOptions } from './job-options';
import { listCheckpoints } from './list-checkpoints';
import { listEvents } from './list-events';
import { listJobs } from './list-jobs';
import { BUCKET_HEADER, PROJECT_PATTERN } from './references';
import { uploadFile } from './upload-file';

const SERVICE_ACCOUNT_HEADER = 'x-gateway-vertex-service-account-json';
const FILE_OPERATIONS = ['uploadFile', 'listFiles', 'getFile', 'fileContent', 'deleteFile'] as const;

const settings = defineSettings({
  /** Either credential will do (see `credentials`); the key file wins when both come (OpenAI SDKs always send Authorization). */
  serviceAccountJson: { header: SERVICE_ACCOUNT_HEADER, key: 'service_account_json', secret: true, maxLength: 16 * 1024, validate: serviceAccountProblem },
  accessToken: {
    header: 'authorization',
    bearer: true,
    key: 'access_token',
    secret: true,
    maxLength: 4096,
    pattern: /^[A-Za-z0-9._~+/=-]+$/,
    format: 'an OAuth 2 access token',
  },
  projectId: {
    header: 'x-gateway-vertex-project-id',
    key: 'x-gateway-vertex-project-id',
    aliases: ['project_id', 'vertex_project_id'],
    required: true,
    pinned: true,
    pattern: PROJECT_PATTERN,
    format: 'a Google Cloud project id (6-30 lower-case letters, digits and "-") or project number',
  },
  region: {
    header: 'x-gateway-vertex-region',
    key: 'x-gateway-vertex-region',
    aliases: ['region', 'vertex_region'],
    required: true,
    pinned: true,
    ...PATTERNS.dnsLabel,
  },
  bucket: {
    header: BUCKET_HEADER,
    key: BUCKET_HEADER,
    aliases: ['storage_bucket_name', 'bucket_name'],
    required: FILE_OPERATIONS,
    pinned: true,
    pattern: /^[a-z0-9][a-z0-9_.-]{1,61}[a-z0-9]$/,
    format: 'a Cloud Storage bucket name (3-63 lower-case letters, digits, "-", "_" and ".")',
  },
});

/** Vertex AI's global location has no regional host. */
const GLOBAL_VERTEX_URL = 'https://aiplatform.googleapis.com/v1';

function credentials(s: SettingValues<typeof settings>, env: ProviderEnvironment): GoogleCredentials {
  if (s.serviceAccountJson) return serviceAccountCredentials(serviceAccount(s.serviceAccountJson, SERVICE_ACCOUNT_HEADER), env.baseUrls.token, env.http);
  if (s.accessToken) return bearerCredentials(s.accessToken);
  throw new GatewayError('invalid_request', 'is required: a service-account key file (or, in client mode, Authorization: Bearer <access token>)', {
    param: SERVICE_ACCOUNT_HEADER,
    aboutField: true,
    code: 'missing_setting',
  });
}

function vertexBaseUrl(env: ProviderEnvironment, region: string): string {
  if (region === 'global' && !env.configured.has('vertex')) return GLOBAL_VERTEX_URL;
  // The region matched a DNS-label pattern: it cannot change the host beyond its own label.
  return env.baseUrls.vertex.replace('{region}', region).replace(/\/+$/, '');
}

export const vertexAIProvider: ProviderModule<typeof settings, VertexConnection> = {
  name: 'vertex-ai',
  title: 'Vertex AI',
  settings,
  jobOptions: vertexJobOptions,
  endpoints: {
    vertex: { env: 'GATEWAY_VERTEX_BASE_URL', default: 'https://{region}-aiplatform.googleapis.com/v1' },
    storage: { env: 'GATEWAY_GCS_BASE_URL', default: 'https://storage.googleapis.com' },
    token: { env: 'GATEWAY_GOOGLE_TOKEN_URL', default: 'https://oauth2.googleapis.com/token' },
  },
  connect: (s, env) => ({
    project: s.projectId,
    region: s.region,
    bucket: s.bucket,
    vertexUrl: vertexBaseUrl(env, s.region),
    storageUrl: env.baseUrls.storage.replace(/\/+$/, ''),
    credentials: credentials(s, env),
    http: env.http,
  }),
  operations: {
    uploadFile,
    listFiles,
    getFile,
    fileContent,
    deleteFile,
    createJob,
    getJob,
    listJobs,
    cancelJob,
    listEvents,
    listCheckpoints,
    findJob,
    chat,
  },
  dataset: geminiDataset,
  chatSupport: VERTEX_CHAT_SUPPORT,
  batch: { ...vertexBatch, client: vertexClientBatch },
};
