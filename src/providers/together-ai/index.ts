/**
 * Together AI: files, fine-tuning and chat in Together's own REST API (`/files`, `/fine-tunes`,
 * `/chat/completions`), Bearer-authenticated, one folder file per operation group. Together
 * validates fine-tune files after the upload, so hosted jobs wait for that before creating the job.
 * There is no `findJob`: Together stores nothing with a job that could carry the gateway's job id.
 */
import { allChatFieldsBut } from '../chat-fields';
import { chatCompletions, maxTokensOnly } from '../openai-compatible/chat';
import { listModels } from '../openai-compatible/models';
import { defineSettings } from '../settings';
import { fileStateOf, type ProviderModule } from '../module';
import { TITLE, type TogetherConnection } from './connection';
import { createJob } from './create-job';
import { togetherJobOptions } from './job-options';
import { deleteFile, fileContent, getFile, listFiles, uploadFile } from './files';
import { listCheckpoints, listEvents } from './history';
import { cancelJob, getJob, listJobs } from './jobs';
import { togetherBatches } from './batches';

const settings = defineSettings({
  apiKey: { header: 'authorization', bearer: true, key: 'api_key', secret: true, required: true, maxLength: 512 },
});

export const togetherProvider: ProviderModule<typeof settings, TogetherConnection> = {
  name: 'together-ai',
  title: TITLE,
  settings,
  jobOptions: togetherJobOptions,
  endpoints: { api: { env: 'GATEWAY_TOGETHER_BASE_URL', default: 'https://api.together.xyz/v1' } },
  connect: (s, env) => ({ title: TITLE, baseUrl: env.baseUrls.api, headers: { authorization: `Bearer ${s.apiKey}` }, secrets: [s.apiKey], http: env.http }),
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
    chat: (conn, request) => chatCompletions(conn, '/chat/completions', request, maxTokensOnly),
    listModels: (conn) => listModels(conn, 'together-ai'),
  },
  /**
   * Together's chat API is OpenAI's, but its `logprobs` is a count with answers in another shape, and
   * it has no audio or file input, metadata, storage, service tiers or reasoning effort.
   */
  chatSupport: {
    fields: allChatFieldsBut('input_audio', 'file', 'logprobs', 'top_logprobs', 'metadata', 'store', 'service_tier', 'reasoning_effort'),
    unknownFields: false,
  },
  hosting: {
    fileState: fileStateOf,
  },
  batch: togetherBatches,
};
