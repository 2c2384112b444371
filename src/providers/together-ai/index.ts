/**
 * Together AI: files, fine-tuning and chat in Together's own REST API (`/files`, `/fine-tunes`,
 * `/chat/completions`), Bearer-authenticated, one folder file per operation group. Together
 * validates fine-tune files after the upload, so hosted jobs wait for that before creating the job.
 * There is no `findJob`: Together stores nothing with a job that could carry the gateway's job id.
 */
import { chatCompletions } from '../openai-compatible/chat';
import { defineSettings } from '../settings';
import { fileStateOf, type ProviderModule } from '../module';
import { TITLE, type TogetherConnection } from './connection';
import { createJob } from './create-job';
import { deleteFile, fileContent, getFile, listFiles, uploadFile } from './files';
import { listCheckpoints, listEvents } from './history';
import { cancelJob, getJob, listJobs } from './jobs';

const settings = defineSettings({
  apiKey: { header: 'authorization', bearer: true, key: 'api_key', secret: true, required: true, maxLength: 512 },
});

export const togetherProvider: ProviderModule<typeof settings, TogetherConnection> = {
  name: 'together-ai',
  title: TITLE,
  settings,
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
    chat: (conn, request) => chatCompletions(conn, '/chat/completions', request),
  },
  hosting: {
    fileState: fileStateOf,
  },
};
