/**
 * Bedrock's connection and operations: everything that needs the AWS SDK, loaded on the first
 * Bedrock call (see ../deferred.ts), not when the gateway starts.
 */
import type { ProviderImplementation } from '../deferred';
import { bedrockBatch } from './batch';
import { cancelJob } from './cancel-job';
import { bedrockClientBatch } from './client-batch';
import { chat } from './chat';
import { connectBedrock, type BedrockConnection } from './connection';
import { createJob } from './create-job';
import { deleteFile, fileContent, getFile, listFiles } from './files';
import { findJob } from './find-job';
import { getJob } from './get-job';
import { listCheckpoints } from './list-checkpoints';
import { listEvents } from './list-events';
import { listJobs } from './list-jobs';
import { listModels } from './list-models';
import type { BedrockSettings } from './settings';
import { uploadFile } from './upload-file';

export const connect = connectBedrock;

/** The batch service, with its client-mode part. */
export const batch = { ...bedrockBatch, client: bedrockClientBatch };

export const operations: ProviderImplementation<BedrockSettings, BedrockConnection>['operations'] = {
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
  listModels,
};
