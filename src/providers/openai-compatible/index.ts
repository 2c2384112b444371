/**
 * The operations of an OpenAI-compatible files and fine-tuning API, each in its own file, shared by
 * the providers that speak it (OpenAI, Azure OpenAI): their modules differ only in settings,
 * endpoints and how they authenticate (see each module's `connect`).
 */
import type { ProviderOperations } from '../types';
import { cancelJob } from './cancel-job';
import type { OpenAICompatibleConnection } from './connection';
import { createJob } from './create-job';
import { deleteFile, fileContent, getFile, listFiles } from './files';
import { findJob } from './find-job';
import { getJob } from './get-job';
import { listCheckpoints } from './list-checkpoints';
import { listEvents } from './list-events';
import { listJobs } from './list-jobs';
import { uploadFile } from './upload-file';

export type { OpenAICompatibleConnection };

export const openAICompatibleOperations: ProviderOperations<OpenAICompatibleConnection> = {
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
};
