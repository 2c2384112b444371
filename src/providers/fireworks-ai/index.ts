/**
 * Fireworks AI: datasets, supervised fine-tuning jobs and chat. The control plane answers under
 * `/v1/accounts/{account}` of `GATEWAY_FIREWORKS_BASE_URL`, inference under `/inference/v1`; the
 * account comes from `x-gateway-fireworks-account-id`, validated as a Fireworks id before it reaches a
 * path. A dataset is the gateway's file; events and checkpoints are synthesised from the job. There
 * is no `cancelJob`: Fireworks' REST API has no cancel (its DELETE destroys the job).
 */
import { defineSettings } from '../settings';
import { fileStateOf, type ProviderModule } from '../module';
import { chat, CHAT_SUPPORT, DEPLOYMENT_HEADER } from './chat';
import { TITLE, type FireworksConnection } from './connection';
import { createJob } from './create-job';
import { deleteFile, fileContent, getFile, listFiles } from './datasets';
import { listCheckpoints, listEvents } from './history';
import { fireworksBatch } from './batch';
import { fireworksClientBatch } from './client-batch';
import { fireworksJobOptions } from './job-options';
import { findJob, getJob, listJobs } from './jobs';
import { listModels } from './models';
import { uploadFile } from './upload-file';

/** Fireworks resource ids (accounts, deployments): 1-63 of `[a-z0-9-]`, no hyphen at either end. */
const FIREWORKS_ID = { pattern: /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/, format: 'a Fireworks id (lower-case letters, digits and "-")' };

const DOWNLOAD_HOSTS_ENV = 'GATEWAY_FIREWORKS_DOWNLOAD_HOSTS';

const settings = defineSettings({
  apiKey: { header: 'authorization', bearer: true, key: 'api_key', secret: true, required: true, maxLength: 512 },
  accountId: {
    header: 'x-gateway-fireworks-account-id',
    key: 'x-gateway-fireworks-account-id',
    aliases: ['account_id'],
    required: true,
    pinned: true,
    ...FIREWORKS_ID,
  },
  deployment: { header: DEPLOYMENT_HEADER, key: DEPLOYMENT_HEADER, aliases: ['deployment', 'deployment_id'], ...FIREWORKS_ID },
});

export const fireworksProvider: ProviderModule<typeof settings, FireworksConnection> = {
  name: 'fireworks-ai',
  title: TITLE,
  settings,
  jobOptions: fireworksJobOptions,
  endpoints: { api: { env: 'GATEWAY_FIREWORKS_BASE_URL', default: 'https://api.fireworks.ai' } },
  // Fireworks' signed dataset URLs are Cloud Storage V4 signed URLs (`x-goog-*` parameters and headers).
  downloads: { env: DOWNLOAD_HOSTS_ENV, default: ['storage.googleapis.com', '*.storage.googleapis.com'] },
  connect: (s, env) => ({
    title: TITLE,
    baseUrl: env.baseUrls.api,
    signedUrls: { title: TITLE, env: DOWNLOAD_HOSTS_ENV, hosts: env.downloadHosts, baseUrls: Object.values(env.baseUrls) },
    account: s.accountId,
    deployment: s.deployment,
    headers: { authorization: `Bearer ${s.apiKey}` },
    secrets: [s.apiKey],
    http: env.http,
  }),
  operations: { uploadFile, listFiles, getFile, fileContent, deleteFile, createJob, getJob, listJobs, listEvents, listCheckpoints, findJob, chat, listModels },
  chatSupport: CHAT_SUPPORT,
  batch: { ...fireworksBatch, client: fireworksClientBatch },
  hosting: {
    fileState: fileStateOf,
  },
};
